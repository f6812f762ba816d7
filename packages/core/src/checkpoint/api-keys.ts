/**
 * The `apiKeys` capability: API keys kept in the store, for machines. A key's secret is never
 * stored, only its SHA-256 digest; a key is found by that digest on every request, so a revoked
 * or expired key is refused at once by every process that shares the store.
 */

/** One API key as the store keeps it. Times are ISO-8601 text. */
export interface ApiKeyRecord {
  /** The visible prefix that identifies the key (`rein_` and 8 characters); unique. */
  id: string;
  /** A label given at creation. */
  name: string;
  /** The tenant the key acts for. */
  tenant: string;
  /** What the key may do (the server's scope names). */
  scopes: string[];
  /** Hex SHA-256 of the whole key; unique. */
  hash: string;
  createdAt: string;
  /** Who created the key (the actor). */
  createdBy: string;
  /** After this time the key is refused; `null`: never expires. */
  expiresAt: string | null;
  /** When the key was revoked; `null` while it is not. */
  revokedAt: string | null;
  /** The last time the key was used (recorded at most about once a minute); `null`: never. */
  lastUsedAt: string | null;
}

/** The API keys of a store. */
export interface ApiKeyStore {
  /**
   * Stores a new key (`revokedAt` and `lastUsedAt` start `null`).
   *
   * @throws when a key with the same id or hash exists (nothing is written).
   */
  createApiKey(key: Omit<ApiKeyRecord, "revokedAt" | "lastUsedAt">): Promise<void>;
  /** The key whose digest is `hash`, revoked and expired ones included, or undefined. */
  getApiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  /** Keys, oldest first; only `tenant`'s when given. */
  listApiKeys(tenant?: string): Promise<ApiKeyRecord[]>;
  /**
   * Revokes a key (of `tenant` only, when given) at `at`. Revoking a revoked key keeps its first
   * time.
   *
   * @returns the key as it is now, or undefined when there is no such key (of that tenant).
   */
  revokeApiKey(id: string, at: string, tenant?: string): Promise<ApiKeyRecord | undefined>;
  /** Records a use of the key at `at` (never moves `lastUsedAt` back). */
  touchApiKey(id: string, at: string): Promise<void>;
}

/** Capability `apiKeys`: the store keeps API keys (see {@link ApiKeyStore}). */
export interface ApiKeyCapability {
  /** The store's API keys. */
  readonly apiKeys: ApiKeyStore;
}

/** The columns of the SQL stores' `api_keys` table, in the order {@link apiKeyValues} gives. */
export const API_KEY_COLUMNS = [
  "id",
  "name",
  "tenant",
  "scopes",
  "hash",
  "created_at",
  "created_by",
  "expires_at",
] as const;

/** A row of the SQL stores' `api_keys` table. */
export interface ApiKeyRow {
  id: string;
  name: string;
  tenant: string;
  /** The scopes as a JSON list. */
  scopes: string;
  hash: string;
  created_at: string;
  created_by: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** The values of a new key's row, in {@link API_KEY_COLUMNS} order. */
export function apiKeyValues(
  key: Omit<ApiKeyRecord, "revokedAt" | "lastUsedAt">,
): (string | null)[] {
  return [
    key.id,
    key.name,
    key.tenant,
    JSON.stringify(key.scopes),
    key.hash,
    key.createdAt,
    key.createdBy,
    key.expiresAt,
  ];
}

/** A key from its row. */
export function apiKeyFromRow(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    tenant: row.tenant,
    scopes: JSON.parse(row.scopes) as string[],
    hash: row.hash,
    createdAt: row.created_at,
    createdBy: row.created_by,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}
