/**
 * The API keys of a {@link PostgresSaver}'s schema (migration 14). Every read goes to the table
 * (no cache), so a key revoked by one process is refused by every other on its next request.
 */
import type pg from "pg";
import {
  API_KEY_COLUMNS,
  apiKeyFromRow,
  apiKeyValues,
  type ApiKeyRecord,
  type ApiKeyRow,
  type ApiKeyStore,
} from "@rein/core/store";
import { guarded } from "./connection.ts";
import { quoteSchema } from "./migrations.ts";

/**
 * The {@link ApiKeyStore} of a Postgres schema.
 *
 * @example
 * ```ts
 * const keys = new PostgresApiKeys(await PostgresSaver.connect({ connectionString }));
 * ```
 */
export class PostgresApiKeys implements ApiKeyStore {
  readonly #saver: { readonly pool: pg.Pool; readonly schema: string };

  /** The API keys of `saver`'s schema, on its pool (read at each call: it may connect later). */
  constructor(saver: { readonly pool: pg.Pool; readonly schema: string }) {
    this.#saver = saver;
  }

  get #s(): string {
    return quoteSchema(this.#saver.schema);
  }

  async #rows(text: string, values: unknown[]): Promise<ApiKeyRecord[]> {
    return guarded(async () =>
      (await this.#saver.pool.query<ApiKeyRow>(text, values)).rows.map(apiKeyFromRow),
    );
  }

  async createApiKey(key: Omit<ApiKeyRecord, "revokedAt" | "lastUsedAt">): Promise<void> {
    await this.#rows(
      `INSERT INTO ${this.#s}.api_keys (${API_KEY_COLUMNS.join(", ")})
       VALUES (${API_KEY_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})`,
      apiKeyValues(key),
    );
  }

  async getApiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const [key] = await this.#rows(`SELECT * FROM ${this.#s}.api_keys WHERE hash = $1`, [hash]);
    return key;
  }

  listApiKeys(tenant?: string): Promise<ApiKeyRecord[]> {
    return tenant === undefined
      ? this.#rows(`SELECT * FROM ${this.#s}.api_keys ORDER BY created_at, id`, [])
      : this.#rows(`SELECT * FROM ${this.#s}.api_keys WHERE tenant = $1 ORDER BY created_at, id`, [
          tenant,
        ]);
  }

  async revokeApiKey(id: string, at: string, tenant?: string): Promise<ApiKeyRecord | undefined> {
    const [key] = await this.#rows(
      `UPDATE ${this.#s}.api_keys SET revoked_at = coalesce(revoked_at, $2)
       WHERE id = $1 AND ($3::text IS NULL OR tenant = $3) RETURNING *`,
      [id, at, tenant ?? null],
    );
    return key;
  }

  async touchApiKey(id: string, at: string): Promise<void> {
    await this.#rows(
      `UPDATE ${this.#s}.api_keys SET last_used_at = $2
       WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`,
      [id, at],
    );
  }
}
