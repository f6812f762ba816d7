/** The API keys of {@link MemorySaver}: a map by id, found by digest. */
import type { ApiKeyRecord, ApiKeyStore } from "../api-keys.ts";

/** API keys held in memory. */
export class MemoryApiKeys implements ApiKeyStore {
  readonly #keys = new Map<string, ApiKeyRecord>();

  createApiKey(key: Omit<ApiKeyRecord, "revokedAt" | "lastUsedAt">): Promise<void> {
    for (const each of this.#keys.values())
      if (each.id === key.id || each.hash === key.hash)
        return Promise.reject(new Error(`An API key with id ${key.id} or its digest exists.`));
    this.#keys.set(key.id, { ...key, scopes: [...key.scopes], revokedAt: null, lastUsedAt: null });
    return Promise.resolve();
  }

  getApiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const found = [...this.#keys.values()].find((each) => each.hash === hash);
    return Promise.resolve(found ? structuredClone(found) : undefined);
  }

  listApiKeys(tenant?: string): Promise<ApiKeyRecord[]> {
    const all = [...this.#keys.values()].filter((k) => tenant === undefined || k.tenant === tenant);
    all.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    return Promise.resolve(structuredClone(all));
  }

  revokeApiKey(id: string, at: string, tenant?: string): Promise<ApiKeyRecord | undefined> {
    const key = this.#keys.get(id);
    if (!key || (tenant !== undefined && key.tenant !== tenant)) return Promise.resolve(undefined);
    key.revokedAt ??= at;
    return Promise.resolve(structuredClone(key));
  }

  touchApiKey(id: string, at: string): Promise<void> {
    const key = this.#keys.get(id);
    if (key && (key.lastUsedAt === null || key.lastUsedAt < at)) key.lastUsedAt = at;
    return Promise.resolve();
  }
}
