/**
 * `GET /whoami`: who the bearer token is. A console shows it after sign-in, so a reviewer knows
 * which tenant's queue they see and under which name their answers are audited.
 */
import type { FastifyInstance } from "fastify";
import type { ServerContext } from "../context.ts";
import { defineRoute } from "./define.ts";
import { WhoamiSchema } from "@rein/wire";

/** Registers `GET /whoami`. */
export function registerWhoamiRoute(app: FastifyInstance, ctx: ServerContext): void {
  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/whoami",
      operationId: "whoami",
      summary:
        "The caller: subject (the actor recorded in the audit log), tenant (null in open mode), scopes, and the groups and roles approval policies check.",
      scope: "read",
      responses: { 200: WhoamiSchema },
    },
    ({ principal }) =>
      Promise.resolve({
        status: 200,
        body: {
          subject: principal.subject,
          tenant: principal.tenant,
          scopes: [...principal.scopes].sort(),
          groups: [...principal.groups],
          roles: [...principal.roles],
          ...(principal.issuer !== undefined ? { issuer: principal.issuer } : {}),
        },
      }),
  );
}
