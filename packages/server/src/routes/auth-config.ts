/**
 * `GET /auth/config`: how a browser signs in, asked before it has any token. It names the OpenID
 * issuer whose tokens this server accepts for the console (the first configured issuer with a
 * `clientId`), that public client's id, the audience to ask tokens for and the scopes to request.
 */
import type { FastifyInstance } from "fastify";
import { AuthSettingsSchema } from "@rein/wire";
import type { ServerContext } from "../context.ts";
import { defineRoute } from "./define.ts";

/** Scopes the console asks for besides its issuer's `consoleScopes`. */
const SIGN_IN_SCOPES = ["openid", "profile", "email"];

/** Registers `GET /auth/config`. */
export function registerAuthConfigRoute(app: FastifyInstance, ctx: ServerContext): void {
  const issuers = ctx.auth.mode === "tokens" ? (ctx.auth.oidc?.issuers ?? []) : [];
  const forConsole = issuers.find((each) => each.clientId !== undefined);
  const body = {
    oidc:
      forConsole?.clientId !== undefined
        ? {
            issuer: forConsole.issuer,
            clientId: forConsole.clientId,
            audience: forConsole.audience[0] ?? forConsole.clientId,
            scopes: [...new Set([...SIGN_IN_SCOPES, ...(forConsole.consoleScopes ?? [])])],
          }
        : null,
  };
  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/auth/config",
      operationId: "authSettings",
      summary:
        "How a browser signs in (no token needed): the OpenID issuer, the console's public client id, the audience and the scopes to request; `oidc` is null when the server has no issuer for the console.",
      scope: null,
      responses: { 200: AuthSettingsSchema },
    },
    () => Promise.resolve({ status: 200, body }),
  );
}
