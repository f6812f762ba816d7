/**
 * The identity configuration and the claim mapping: algorithms outside the public-key list are
 * refused at start, each issuer names one tenant source, flags pair issuers with audiences, and
 * claims (namespaced, dotted, nested through keys with dots) become the principal.
 */
import { describe, expect, it } from "vitest";
import { ClaimError, principalOf } from "./claims.ts";
import { issuersFromFlags, parseIdentity } from "./config.ts";

const ISSUER = "https://login.example.com/";
const file = (over: Record<string, unknown>) =>
  JSON.stringify({ issuers: [{ issuer: ISSUER, audience: "api", tenant: "acme", ...over }] });

describe("the identity file", () => {
  it("refuses none, HS* and unknown algorithms, naming the field", () => {
    for (const alg of ["none", "HS256", "HS512", "XS1"])
      expect(() => parseIdentity(file({ algorithms: [alg] }), "identity.json")).toThrow(
        /algorithms\.0: algorithms are public-key ones only/,
      );
    expect(parseIdentity(file({ algorithms: ["RS256", "ES256"] }), "i")[0]?.algorithms).toEqual([
      "RS256",
      "ES256",
    ]);
  });

  it("takes a fixed tenant or a tenant claim, never both nor neither; refuses a fragment and a repeated issuer", () => {
    expect(() => parseIdentity(file({ claims: { tenant: "org_id" } }), "identity.json")).toThrow(
      /either "tenant"/,
    );
    expect(() => parseIdentity(file({ tenant: undefined }), "identity.json")).toThrow(/either/);
    expect(() => parseIdentity(file({ issuer: `${ISSUER}#x` }), "identity.json")).toThrow(
      /no query or fragment/,
    );
    const twice = JSON.stringify({
      issuers: [
        { issuer: ISSUER, audience: "a", tenant: "t" },
        { issuer: ISSUER, audience: "b", tenant: "t" },
      ],
    });
    expect(() => parseIdentity(twice, "identity.json")).toThrow(/twice/);
    expect(() => parseIdentity("{", "identity.json")).toThrow(/not valid JSON/);
  });

  it("pairs flags: one audience for all or one each; the client id goes to the first; tenant default", () => {
    const two = issuersFromFlags({
      issuers: [ISSUER, "https://other.example.com"],
      audiences: ["api"],
      clientId: "console",
    });
    expect(two.map((i) => [i.issuer, i.audience, i.clientId, i.fixedTenant])).toEqual([
      [ISSUER, ["api"], "console", "default"],
      ["https://other.example.com", ["api"], undefined, "default"],
    ]);
    expect(() =>
      issuersFromFlags({ issuers: [ISSUER, ISSUER], audiences: ["a", "b", "c"] }),
    ).toThrow(/one --oidc-audience for every/);
    expect(() => issuersFromFlags({ issuers: [], audiences: ["a"] })).toThrow(
      /need an --oidc-issuer/,
    );
    const claimed = issuersFromFlags({
      issuers: [ISSUER],
      audiences: ["api"],
      tenantClaim: "org_id",
      groupsClaim: "groups",
    });
    expect(claimed[0]).toMatchObject({
      fixedTenant: undefined,
      tenant: "org_id",
      groups: "groups",
    });
  });
});

describe("claims to a principal", () => {
  const claims = {
    sub: "u-1",
    email: "alice@example.com",
    org: { id: "acme" },
    "https://rein.example.com/roles": ["approver"],
    resource_access: { "rein.api": { roles: ["operator"] } },
    groups: "finance",
    scope: "openid rein:read rein:resume other",
    scp: ["rein:run"],
  };

  it("reads namespaced, dotted and key-list paths; scopes after the prefix and from roles and groups", () => {
    const principal = principalOf(claims, {
      issuer: ISSUER,
      subject: "email",
      tenant: "org.id",
      groups: "groups",
      roles: "https://rein.example.com/roles",
      scopePrefix: "rein:",
      roleScopes: { finance: ["read"], approver: ["resume"] },
    });
    expect(principal).toMatchObject({
      subject: `${ISSUER}#alice@example.com`,
      issuer: ISSUER,
      tenant: "acme",
      groups: ["finance"],
      roles: ["approver"],
    });
    expect([...principal.scopes].sort()).toEqual(["read", "resume", "run"]);
    const nested = principalOf(claims, {
      issuer: ISSUER,
      fixedTenant: "acme",
      roles: ["resource_access", "rein.api", "roles"],
    });
    expect(nested.roles).toEqual(["operator"]);
    // Without a prefix, only bare scope names count: rein:read is not read.
    expect([...nested.scopes]).toEqual([]);
  });

  it("names the claim to fix when the subject or tenant is missing, or a list holds other than strings", () => {
    expect(() => principalOf(claims, { issuer: ISSUER, tenant: "org_id" })).toThrow(ClaimError);
    expect(() => principalOf(claims, { issuer: ISSUER, tenant: "org_id" })).toThrow(
      /no org_id claim \(its tenant\)/,
    );
    expect(() => principalOf({ ...claims, sub: 7 }, { issuer: ISSUER, fixedTenant: "t" })).toThrow(
      /no sub claim \(its subject\)/,
    );
    expect(() =>
      principalOf(
        { ...claims, groups: [1, 2] },
        { issuer: ISSUER, fixedTenant: "t", groups: "groups" },
      ),
    ).toThrow(/groups claim must be a string or a list of strings/);
  });
});
