/**
 * The API keys of a {@link SqliteSaver}'s file (migration 12): one row per key, its secret's
 * SHA-256 digest unique and indexed, so a request's key is one indexed read.
 */
import type { DatabaseSync } from "node:sqlite";
import {
  API_KEY_COLUMNS,
  apiKeyFromRow,
  apiKeyValues,
  type ApiKeyRecord,
  type ApiKeyRow,
  type ApiKeyStore,
} from "@rein/core/store";
import { settle } from "./errors.ts";

/** Migration 12: the `api_keys` table. */
export const API_KEYS_SCHEMA = `
  CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    tenant       TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    created_at   TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    expires_at   TEXT,
    revoked_at   TEXT,
    last_used_at TEXT
  );
  CREATE INDEX api_keys_by_tenant ON api_keys (tenant, created_at, id);
`;

/**
 * The {@link ApiKeyStore} of a SQLite file.
 *
 * @example
 * ```ts
 * const keys = new SqliteApiKeys(SqliteSaver.open("rein.db"));
 * ```
 */
export class SqliteApiKeys implements ApiKeyStore {
  readonly #saver: { readonly db: DatabaseSync };

  /** The API keys of `saver`'s file, on its connection (read at each call: it may open later). */
  constructor(saver: { readonly db: DatabaseSync }) {
    this.#saver = saver;
  }

  get #db(): DatabaseSync {
    return this.#saver.db;
  }

  createApiKey(key: Omit<ApiKeyRecord, "revokedAt" | "lastUsedAt">): Promise<void> {
    return settle(() => {
      this.#db
        .prepare(
          `INSERT INTO api_keys (${API_KEY_COLUMNS.join(", ")})
           VALUES (${API_KEY_COLUMNS.map(() => "?").join(", ")})`,
        )
        .run(...apiKeyValues(key));
    });
  }

  getApiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    return settle(() => {
      const row = this.#db.prepare("SELECT * FROM api_keys WHERE hash = ?").get(hash);
      return row ? apiKeyFromRow(row as unknown as ApiKeyRow) : undefined;
    });
  }

  listApiKeys(tenant?: string): Promise<ApiKeyRecord[]> {
    return settle(() => {
      const rows =
        tenant === undefined
          ? this.#db.prepare("SELECT * FROM api_keys ORDER BY created_at, id").all()
          : this.#db
              .prepare("SELECT * FROM api_keys WHERE tenant = ? ORDER BY created_at, id")
              .all(tenant);
      return rows.map((row) => apiKeyFromRow(row as unknown as ApiKeyRow));
    });
  }

  revokeApiKey(id: string, at: string, tenant?: string): Promise<ApiKeyRecord | undefined> {
    return settle(() => {
      const row = this.#db
        .prepare(
          `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?)
           WHERE id = ? AND (? IS NULL OR tenant = ?) RETURNING *`,
        )
        .get(at, id, tenant ?? null, tenant ?? null);
      return row ? apiKeyFromRow(row as unknown as ApiKeyRow) : undefined;
    });
  }

  touchApiKey(id: string, at: string): Promise<void> {
    return settle(() => {
      this.#db
        .prepare(
          "UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
        )
        .run(at, id, at);
    });
  }
}
