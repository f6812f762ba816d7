/**
 * Decision link tokens: what a link is bound to (the interrupt, its payload digest, the
 * principal it was issued to, the decision, the expiry, a nonce that makes it single-use),
 * signed with HMAC-SHA256. The token is `<claims>.<signature>`, both base64url; nothing is
 * stored when a link is minted, only when it is used.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { LinkSettings } from "./config.ts";

/** What a link does: approve (`{ type: "accept" }`) or reject (`{ type: "ignore" }`). */
export type LinkDecision = "approve" | "reject";

/** The principal a link acts as. */
export interface LinkPrincipal {
  subject: string;
  groups: string[];
  roles: string[];
}

/** What a token is bound to. */
export interface LinkClaims {
  /** Format version. */
  v: 1;
  interruptId: string;
  threadId: string;
  /** The interrupt's tenant (the decision is applied within it). */
  tenant: string | null;
  /** The payload digest the question had when the link was minted (`sha256:…`). */
  digest: string;
  principal: LinkPrincipal;
  decision: LinkDecision;
  /** Expiry, ms since the epoch. */
  exp: number;
  /** Makes the link single-use: its use is recorded under this nonce. */
  nonce: string;
}

/** A minted link. */
export interface MintedLink {
  decision: LinkDecision;
  token: string;
  /** `{publicUrl}/links/<token>`. */
  url: string;
  expiresAt: string;
}

/** Why a token was refused before the store was read. */
export type TokenRefusal = "forged" | "expired";

/** The answer a decision applies, in the decision convention. */
export function decisionValue(decision: LinkDecision): { type: "accept" | "ignore" } {
  return { type: decision === "approve" ? "accept" : "ignore" };
}

// Domain separation: no other HMAC under the same key can be replayed as a link.
const sign = (secret: string, body: string): Buffer =>
  createHmac("sha256", secret).update(`rein-link.v1.${body}`).digest();

/** Mints one link for `claims` (without version, nonce and expiry), valid for the settings' TTL. */
export function mintLink(
  settings: LinkSettings,
  claims: Omit<LinkClaims, "v" | "exp" | "nonce">,
  ttlMs: number = settings.ttlMs,
  now: number = Date.now(),
): MintedLink {
  const full: LinkClaims = {
    v: 1,
    ...claims,
    exp: now + ttlMs,
    nonce: randomBytes(16).toString("base64url"),
  };
  const body = Buffer.from(JSON.stringify(full)).toString("base64url");
  const token = `${body}.${sign(settings.secret, body).toString("base64url")}`;
  return {
    decision: claims.decision,
    token,
    url: `${settings.publicUrl}/links/${token}`,
    expiresAt: new Date(full.exp).toISOString(),
  };
}

function isClaims(value: unknown): value is LinkClaims {
  if (typeof value !== "object" || value === null) return false;
  const c = value as Record<string, unknown>;
  const p = c["principal"] as Record<string, unknown> | null | undefined;
  return (
    c["v"] === 1 &&
    typeof c["interruptId"] === "string" &&
    typeof c["threadId"] === "string" &&
    (typeof c["tenant"] === "string" || c["tenant"] === null) &&
    typeof c["digest"] === "string" &&
    (c["decision"] === "approve" || c["decision"] === "reject") &&
    typeof c["exp"] === "number" &&
    typeof c["nonce"] === "string" &&
    typeof p === "object" &&
    p !== null &&
    typeof p["subject"] === "string" &&
    Array.isArray(p["groups"]) &&
    Array.isArray(p["roles"])
  );
}

/**
 * The claims of a token signed by the current or a rotated-out key, checked in constant time.
 * A token whose signature holds but has expired is `expired`; anything else that fails is `forged`.
 */
export function verifyLink(
  settings: LinkSettings,
  token: string,
  now: number = Date.now(),
): { ok: true; claims: LinkClaims } | { ok: false; reason: TokenRefusal } {
  const match = /^([A-Za-z0-9_-]{1,8192})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match?.[1] || !match[2]) return { ok: false, reason: "forged" };
  const body = match[1];
  // The signature's text is compared, not its decoded bytes: base64url decoding drops the last
  // character's two spare bits, so four spellings would decode to one signature.
  const given = Buffer.from(match[2], "ascii");
  let valid = false;
  for (const secret of [settings.secret, ...settings.previousSecrets]) {
    const expected = Buffer.from(sign(secret, body).toString("base64url"), "ascii");
    if (given.length === expected.length && timingSafeEqual(given, expected)) valid = true;
  }
  if (!valid) return { ok: false, reason: "forged" };
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return { ok: false, reason: "forged" };
  }
  if (!isClaims(claims)) return { ok: false, reason: "forged" };
  if (claims.exp <= now) return { ok: false, reason: "expired" };
  return { ok: true, claims };
}
