/**
 * The `apiKeys` capability: keys stored by digest only, found by digest, listed per tenant,
 * revoked once (the first time kept), and their last use recorded forward only.
 */
import { expect } from "vitest";
import type { ApiKeyRecord } from "../../checkpoint/api-keys.ts";
import type { SpecModule } from "../suite.ts";

const T0 = "2026-01-01T00:00:00.000Z";
const T1 = "2026-01-01T00:01:00.000Z";
const T2 = "2026-01-01T00:02:00.000Z";

function makeKey(
  id: string,
  tenant: string,
  over: Partial<ApiKeyRecord> = {},
): Omit<ApiKeyRecord, "revokedAt" | "lastUsedAt"> {
  return {
    id,
    name: `${id} of ${tenant}`,
    tenant,
    scopes: ["read", "resume"],
    hash: `${id.padEnd(64, "0").slice(0, 64)}`,
    createdAt: T0,
    createdBy: "root@acme",
    expiresAt: null,
    ...over,
  };
}

/** Specs of the API key capability. */
export const apiKeySpecs: SpecModule = {
  concern: "api-keys",
  register({ spec }) {
    spec(
      "a created key is found by its digest with every field, and is neither revoked nor used",
      async (saver) => {
        const key = makeKey("rein_aaaaaaaa", "acme", { expiresAt: T2 });
        await saver.apiKeys.createApiKey(key);
        expect(await saver.apiKeys.getApiKeyByHash(key.hash)).toEqual({
          ...key,
          revokedAt: null,
          lastUsedAt: null,
        });
        expect(await saver.apiKeys.getApiKeyByHash("f".repeat(64))).toBeUndefined();
      },
      ["apiKeys"],
    );
    spec(
      "a second key with the same id or digest is refused and changes nothing",
      async (saver) => {
        const key = makeKey("rein_bbbbbbbb", "acme");
        await saver.apiKeys.createApiKey(key);
        await expect(
          saver.apiKeys.createApiKey({ ...key, hash: "e".repeat(64), tenant: "globex" }),
        ).rejects.toThrow();
        await expect(
          saver.apiKeys.createApiKey({ ...key, id: "rein_cccccccc", tenant: "globex" }),
        ).rejects.toThrow();
        expect((await saver.apiKeys.listApiKeys()).map((k) => [k.id, k.tenant])).toEqual([
          ["rein_bbbbbbbb", "acme"],
        ]);
      },
      ["apiKeys"],
    );
    spec(
      "keys list oldest first, only the tenant's when one is named",
      async (saver) => {
        await saver.apiKeys.createApiKey(makeKey("rein_dddddddd", "acme", { createdAt: T1 }));
        await saver.apiKeys.createApiKey(makeKey("rein_eeeeeeee", "globex", { createdAt: T0 }));
        await saver.apiKeys.createApiKey(makeKey("rein_ffffffff", "acme", { createdAt: T0 }));
        expect((await saver.apiKeys.listApiKeys()).map((k) => k.id)).toEqual([
          "rein_eeeeeeee",
          "rein_ffffffff",
          "rein_dddddddd",
        ]);
        expect((await saver.apiKeys.listApiKeys("acme")).map((k) => k.id)).toEqual([
          "rein_ffffffff",
          "rein_dddddddd",
        ]);
        expect(await saver.apiKeys.listApiKeys("initech")).toEqual([]);
      },
      ["apiKeys"],
    );
    spec(
      "revoking keeps the first time, is refused for another tenant, and shows on the digest read",
      async (saver) => {
        const key = makeKey("rein_gggggggg", "acme");
        await saver.apiKeys.createApiKey(key);
        expect(await saver.apiKeys.revokeApiKey(key.id, T1, "globex")).toBeUndefined();
        expect((await saver.apiKeys.getApiKeyByHash(key.hash))?.revokedAt).toBeNull();
        expect((await saver.apiKeys.revokeApiKey(key.id, T1, "acme"))?.revokedAt).toBe(T1);
        expect((await saver.apiKeys.revokeApiKey(key.id, T2))?.revokedAt).toBe(T1);
        expect((await saver.apiKeys.getApiKeyByHash(key.hash))?.revokedAt).toBe(T1);
        expect(await saver.apiKeys.revokeApiKey("rein_zzzzzzzz", T1)).toBeUndefined();
      },
      ["apiKeys"],
    );
    spec(
      "a use is recorded forward only",
      async (saver) => {
        const key = makeKey("rein_hhhhhhhh", "acme");
        await saver.apiKeys.createApiKey(key);
        await saver.apiKeys.touchApiKey(key.id, T2);
        await saver.apiKeys.touchApiKey(key.id, T1);
        expect((await saver.apiKeys.getApiKeyByHash(key.hash))?.lastUsedAt).toBe(T2);
        await saver.apiKeys.touchApiKey("rein_zzzzzzzz", T2);
      },
      ["apiKeys"],
    );
  },
};
