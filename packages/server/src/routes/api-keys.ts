/**
 * `/api-keys`: keys for machines, kept in the store (the `apiKeys` capability). Every route needs
 * the `admin` scope: a key acts for its tenant with the scopes it was given. A key's secret is in
 * the creation's answer only; the store keeps its SHA-256. A caller sees and revokes only its
 * tenant's keys; another tenant's id is "not found".
 */
import type { FastifyInstance } from "fastify";
import { InvalidInputError, NotFoundError } from "@rein/core";
import type { ApiKeyRecord, ApiKeyStore } from "@rein/core/store";
import {
  ApiKeyListSchema,
  ApiKeyParams,
  ApiKeySchema,
  CreateApiKeyBody,
  CreatedApiKeySchema,
} from "@rein/wire";
import type { ServerContext } from "../context.ts";
import { newApiKey } from "../identity/api-keys.ts";
import { isScope, type Scope } from "../identity/principal.ts";
import { defineRoute } from "./define.ts";

/** A key as the API shows it: everything but its digest. */
function shown(record: ApiKeyRecord) {
  const { hash: _hash, ...rest } = record;
  return { ...rest, scopes: rest.scopes.filter((s): s is Scope => isScope(s)) };
}

/** Registers the `/api-keys` routes on a store that keeps API keys. */
export function registerApiKeyRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  keys: ApiKeyStore,
): void {
  registerCreateRoute(app, ctx, keys);
  registerListAndRevokeRoutes(app, ctx, keys);
}

/** `POST /api-keys`. */
function registerCreateRoute(app: FastifyInstance, ctx: ServerContext, keys: ApiKeyStore): void {
  defineRoute(
    app,
    ctx,
    {
      method: "POST",
      url: "/api-keys",
      operationId: "createApiKey",
      summary:
        "Creates an API key of the caller's tenant with the given scopes and optional expiry; the answer holds the key, shown only once (the store keeps its SHA-256).",
      scope: "admin",
      body: CreateApiKeyBody,
      responses: { 201: CreatedApiKeySchema },
    },
    async ({ body, principal }) => {
      const tenant = principal.tenant ?? body.tenant;
      if (tenant === undefined)
        throw new InvalidInputError("Name the key's tenant: { tenant } (open mode has none).");
      if (principal.tenant !== null && body.tenant !== undefined && body.tenant !== tenant)
        throw new InvalidInputError(
          `A key of ${principal.subject} acts for its tenant ${JSON.stringify(tenant)}; omit tenant.`,
        );
      if (body.scopes.includes("metrics") && !principal.scopes.has("metrics"))
        throw new InvalidInputError(
          'Only a caller with the "metrics" scope gives it to a key (metrics count every tenant).',
        );
      const now = new Date();
      const expiresAt = body.expiresAt ? new Date(body.expiresAt).toISOString() : null;
      if (expiresAt !== null && expiresAt <= now.toISOString())
        throw new InvalidInputError("expiresAt is in the past; give a time in the future.");
      const made = newApiKey();
      const record = {
        id: made.id,
        name: body.name,
        tenant,
        scopes: [...new Set(body.scopes)],
        hash: made.hash,
        createdAt: now.toISOString(),
        createdBy: principal.subject,
        expiresAt,
      };
      await keys.createApiKey(record);
      return {
        status: 201,
        body: { ...shown({ ...record, revokedAt: null, lastUsedAt: null }), key: made.key },
      };
    },
  );
}

/** `GET /api-keys` and `DELETE /api-keys/:id`. */
function registerListAndRevokeRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  keys: ApiKeyStore,
): void {
  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/api-keys",
      operationId: "listApiKeys",
      summary:
        "The caller's tenant's API keys, oldest first, with prefix, scopes, expiry, revocation and last use (never the key).",
      scope: "admin",
      responses: { 200: ApiKeyListSchema },
    },
    async ({ principal }) => {
      const all = await keys.listApiKeys(principal.tenant ?? undefined);
      return { status: 200, body: { items: all.map(shown) } };
    },
  );
  defineRoute(
    app,
    ctx,
    {
      method: "DELETE",
      url: "/api-keys/:id",
      operationId: "revokeApiKey",
      summary:
        "Revokes an API key: every process refuses it from its next request (401 key_revoked). Revoking again keeps the first time.",
      scope: "admin",
      params: ApiKeyParams,
      responses: { 200: ApiKeySchema },
    },
    async ({ params, principal }) => {
      const revoked = await keys.revokeApiKey(
        params.id,
        new Date().toISOString(),
        principal.tenant ?? undefined,
      );
      if (!revoked) throw new NotFoundError("api key", params.id);
      return { status: 200, body: shown(revoked) };
    },
  );
}
