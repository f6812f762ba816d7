/**
 * API keys for machines: `rein_<id>_<secret>`, where `rein_<id>` is the prefix shown to identify
 * a key and the secret holds 256 random bits. The store keeps only the SHA-256 of the whole key
 * (the `apiKeys` capability) and is read on every request: a revoked or expired key is refused at
 * once by every process sharing the store.
 */
import { createHash, randomBytes } from "node:crypto";
import { ErrorCodes } from "@rein/core";
import type { ApiKeyRecord, ApiKeyStore } from "@rein/core/store";
import { UnauthorizedError } from "../errors.ts";
import { CredentialError } from "./errors.ts";
import { isScope, type Principal, type Scope } from "./principal.ts";

/** A key's shape: the visible prefix (`rein_` and 8 characters), then the secret. */
const KEY_SHAPE = /^(rein_[a-z0-9]{8})_[A-Za-z0-9_-]{43}$/;

/** How often one process records a key's use (`last_used_at`): at most once a minute. */
const TOUCH_EVERY_MS = 60_000;

/** Whether a bearer credential has the shape of an API key. */
export function isApiKey(credential: string): boolean {
  return KEY_SHAPE.test(credential);
}

/** Hex SHA-256 of a key: all the store keeps of it. */
export function apiKeyDigest(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** A new key: its id (the visible prefix), the whole key, and its digest. */
export function newApiKey(): { id: string; key: string; hash: string } {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const id = `rein_${[...randomBytes(8)].map((b) => alphabet[b % alphabet.length]).join("")}`;
  const key = `${id}_${randomBytes(32).toString("base64url")}`;
  return { id, key, hash: apiKeyDigest(key) };
}

/** The principal of a stored key: subject `key:<id>`, its tenant and scopes. */
export function keyPrincipal(record: ApiKeyRecord): Principal {
  return {
    subject: `key:${record.id}`,
    tenant: record.tenant,
    scopes: new Set(record.scopes.filter((s): s is Scope => isScope(s))),
    groups: [],
    roles: [],
  };
}

/** Checks API keys against the store. */
export interface ApiKeyVerifier {
  /**
   * The principal of a key.
   *
   * @throws UnauthorizedError for an unknown key; CredentialError `key_revoked` or `key_expired`.
   */
  verify(key: string): Promise<Principal>;
}

/** API keys checked against a store's `apiKeys` capability on every request. */
export class StoreApiKeys implements ApiKeyVerifier {
  readonly #touched = new Map<string, number>();

  constructor(
    private readonly keys: ApiKeyStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async verify(key: string): Promise<Principal> {
    const record = await this.keys.getApiKeyByHash(apiKeyDigest(key));
    if (!record)
      throw new UnauthorizedError(
        "The API key is not known to this server: check it was copied whole, or create one with rein keys create.",
      );
    const now = this.now();
    if (record.revokedAt !== null)
      throw new CredentialError(
        ErrorCodes.KEY_REVOKED,
        `The API key ${record.id} was revoked at ${record.revokedAt}; ask an admin for a new one.`,
        { id: record.id },
      );
    if (record.expiresAt !== null && record.expiresAt <= now.toISOString())
      throw new CredentialError(
        ErrorCodes.KEY_EXPIRED,
        `The API key ${record.id} expired at ${record.expiresAt}; ask an admin for a new one.`,
        { id: record.id },
      );
    const last = this.#touched.get(record.id) ?? 0;
    if (now.getTime() - last >= TOUCH_EVERY_MS) {
      this.#touched.set(record.id, now.getTime());
      await this.keys.touchApiKey(record.id, now.toISOString());
    }
    return keyPrincipal(record);
  }
}
