/** The part of `oidc-provider` (which ships no types) the tests use. */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  /** An OpenID provider (a Koa application). */
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    /** The provider's request handler. */
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    /** Koa's `proxy` setting. */
    proxy: boolean;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
}
