/**
 * The zod schemas of the `/api-keys` routes (the OpenAPI document derives from them).
 */
import { z } from "zod";
import { text } from "./schemas.ts";

const ScopeSchema = z.enum(["read", "run", "resume", "admin", "metrics"]);

/** `POST /api-keys`. */
export const CreateApiKeyBody = z
  .object({
    /** A label to know the key by (the machine or job that uses it). */
    name: text(256),
    scopes: z.array(ScopeSchema).min(1).max(5),
    /** The key's tenant; only an open-mode caller (who has none) names one. */
    tenant: text(256).optional(),
    /** When the key stops working (ISO-8601, in the future); omitted: never. */
    expiresAt: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();

/** `DELETE /api-keys/:id`. */
export const ApiKeyParams = z.object({
  id: z.string().regex(/^rein_[a-z0-9]{8}$/, "an API key id is rein_ and 8 characters"),
});

/** An API key as listed: never its secret. */
export const ApiKeySchema = z.object({
  /** The visible prefix the key starts with. */
  id: z.string(),
  name: z.string(),
  tenant: z.string(),
  scopes: z.array(ScopeSchema),
  createdAt: z.string(),
  createdBy: z.string(),
  expiresAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
});

/** `POST /api-keys`: the key, and its secret value, shown only here. */
export const CreatedApiKeySchema = ApiKeySchema.extend({
  /** The whole key: send it as `Authorization: Bearer <key>`. Shown once; only a digest is kept. */
  key: z.string(),
});

/** `GET /api-keys`. */
export const ApiKeyListSchema = z.object({ items: z.array(ApiKeySchema) });
