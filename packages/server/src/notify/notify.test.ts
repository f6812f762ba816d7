/**
 * The notifier's pure parts: link tokens (binding, expiry, forgery, key rotation), the config
 * (defaults, refusals, the secret from the environment), who is told, and how a question reads.
 */
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "@rein/core";
import type { StoredInterrupt } from "@rein/core/store";
import { linkSettings, parseDuration, parseNotifyConfig, type LinkSettings } from "./config.ts";
import { EmailNotifier } from "./email.ts";
import { approvalState, graphLabel, linkDecisions, questionSummary } from "./question.ts";
import { recipientsOf } from "./recipients.ts";
import { mintLink, verifyLink, type LinkClaims } from "./tokens.ts";
import type { InterruptEventData } from "../webhooks/payload.ts";

const KEY = "k".repeat(40);
const settings: LinkSettings = {
  secret: KEY,
  previousSecrets: [],
  publicUrl: "https://rein.test",
  ttlMs: 60_000,
};
const claims: Omit<LinkClaims, "v" | "exp" | "nonce"> = {
  interruptId: "i_1",
  threadId: "t-1",
  tenant: "acme",
  digest: "sha256:abc",
  principal: { subject: "alice", groups: ["finance"], roles: [] },
  decision: "approve",
};

describe("link tokens", () => {
  it("verify with the key that signed them, until they expire", () => {
    const link = mintLink(settings, claims, 60_000, 1_000);
    expect(link.url).toBe(`https://rein.test/links/${link.token}`);
    expect(link.expiresAt).toBe(new Date(61_000).toISOString());
    const verified = verifyLink(settings, link.token, 60_999);
    expect(verified).toMatchObject({ ok: true, claims: { ...claims, v: 1, exp: 61_000 } });
    expect(verifyLink(settings, link.token, 61_000)).toEqual({ ok: false, reason: "expired" });
  });

  it("each link has its own nonce", () => {
    const a = verifyLink(settings, mintLink(settings, claims).token);
    const b = verifyLink(settings, mintLink(settings, claims).token);
    expect(a.ok && b.ok && a.claims.nonce !== b.claims.nonce).toBe(true);
  });

  it("refuse altered claims, another key, and garbage as forged", () => {
    const { token } = mintLink(settings, claims);
    const [body, signature] = token.split(".") as [string, string];
    const altered = Buffer.from(
      Buffer.from(body, "base64url").toString().replace('"alice"', '"mallory"'),
    ).toString("base64url");
    expect(verifyLink(settings, `${altered}.${signature}`)).toEqual({
      ok: false,
      reason: "forged",
    });
    // A later expiry under the old signature is forged too (not "expired", not valid).
    const extended = Buffer.from(
      Buffer.from(body, "base64url")
        .toString()
        .replace(/"exp":\d+/, '"exp":99999999999999'),
    ).toString("base64url");
    expect(verifyLink(settings, `${extended}.${signature}`).ok).toBe(false);
    expect(verifyLink({ ...settings, secret: "o".repeat(40) }, token).ok).toBe(false);
    for (const bad of ["", "x", "a.b", `${body}.`, `${body}.${signature}x`, `.${signature}`])
      expect(verifyLink(settings, bad)).toEqual({ ok: false, reason: "forged" });
  });

  it("a rotated-out key still verifies its links; new links use the new key only", () => {
    const old = mintLink(settings, claims).token;
    const rotated = { ...settings, secret: "n".repeat(40), previousSecrets: [KEY] };
    expect(verifyLink(rotated, old).ok).toBe(true);
    const fresh = mintLink(rotated, claims).token;
    expect(verifyLink(settings, fresh).ok).toBe(false);
    expect(verifyLink({ ...rotated, previousSecrets: [] }, old).ok).toBe(false);
  });
});

describe("the notifier config", () => {
  const minimal = { publicUrl: "https://rein.test/" };

  it("fills defaults and reads the link key from REIN_LINK_SECRET first", () => {
    const config = parseNotifyConfig(
      JSON.stringify({
        ...minimal,
        email: { smtp: "smtp://127.0.0.1:2525", from: "Rein <r@x.test>" },
        links: { secret: "c".repeat(32) },
      }),
      "notify.json",
    );
    expect(config.email?.events).toEqual([
      "interrupt.pending",
      "interrupt.reminded",
      "interrupt.escalated",
    ]);
    expect(config.people).toEqual([]);
    expect(linkSettings(config, {})).toEqual({
      secret: "c".repeat(32),
      previousSecrets: [],
      publicUrl: "https://rein.test",
      ttlMs: 3 * 86_400_000,
    });
    expect(linkSettings(config, { REIN_LINK_SECRET: "e".repeat(32) })?.secret).toBe("e".repeat(32));
    expect(() => linkSettings(config, { REIN_LINK_SECRET: "short" })).toThrow(InvalidInputError);
    expect(linkSettings(parseNotifyConfig(JSON.stringify(minimal), "n"), {})).toBeNull();
  });

  it("refuses a bad file naming each problem", () => {
    expect(() => parseNotifyConfig("{", "notify.json")).toThrow("notify.json is not valid JSON.");
    const bad = () =>
      parseNotifyConfig(
        JSON.stringify({
          publicUrl: "ftp://x",
          people: [{ subject: "a", email: "not-an-address" }],
          email: { smtp: "http://x", from: "r", events: ["nope"] },
          links: { ttl: "forever", secret: "short" },
        }),
        "notify.json",
      );
    expect(bad).toThrow(InvalidInputError);
    expect(bad).toThrow(/publicUrl.*people\.0\.email.*email\.smtp.*email\.events\.0.*links\.ttl/s);
    expect(() =>
      parseNotifyConfig(JSON.stringify({ ...minimal, links: { ttl: "31d" } }), "n"),
    ).toThrow("at most 30d");
  });

  it("reads durations", () => {
    expect(parseDuration("90s")).toBe(90_000);
    expect(parseDuration("15m")).toBe(900_000);
    expect(parseDuration("12h")).toBe(43_200_000);
    expect(parseDuration("3d")).toBe(259_200_000);
    expect(parseDuration(30)).toBe(30_000);
    expect(parseDuration("30")).toBe(30_000);
    for (const bad of ["", "0s", "-1m", "3w", "d", -5, 0]) expect(parseDuration(bad)).toBeNull();
  });
});

const people = [
  { subject: "alice", groups: ["finance"], email: "alice@x.test" },
  { subject: "bob", groups: ["finance"], email: "bob@x.test" },
  { subject: "rita", groups: ["finance", "support"], email: "rita@x.test" },
  { subject: "riley", groups: ["support"], roles: ["lead"], email: "riley@x.test" },
  { subject: "nomail", groups: ["finance"] },
];

describe("who is told", () => {
  it("the policy's approvers, never the requester under four eyes, each address once", () => {
    const to = recipientsOf(
      people,
      ["ops@x.test"],
      { groups: ["finance"], subjects: ["alice"] },
      { notRequester: true, requester: "rita" },
    );
    expect(to.map((r) => r.address)).toEqual(["alice@x.test", "bob@x.test"]);
    expect(
      recipientsOf(people, [], { roles: ["lead"] }, { notRequester: false, requester: null }).map(
        (r) => r.address,
      ),
    ).toEqual(["riley@x.test"]);
  });

  it("never people of another tenant", () => {
    const tenants = [
      { subject: "alice", tenant: "acme", groups: ["finance"], email: "alice@x.test" },
      { subject: "gina", tenant: "globex", groups: ["finance"], email: "gina@x.test" },
      { subject: "ops", groups: ["finance"], email: "ops@x.test" },
    ];
    const none = { notRequester: false, requester: null };
    const to = (tenant: string | null) =>
      recipientsOf(tenants, [], { groups: ["finance"] }, none, tenant).map((r) => r.address);
    expect(to("acme")).toEqual(["alice@x.test", "ops@x.test"]);
    expect(to("globex")).toEqual(["gina@x.test", "ops@x.test"]);
    expect(to(null)).toEqual(["ops@x.test"]);
  });

  it("the fallback without a policy; everyone for a policy that lists no one", () => {
    const none = { notRequester: false, requester: null };
    expect(recipientsOf(people, ["ops@x.test", "ops@x.test"], null, none)).toEqual([
      { person: null, address: "ops@x.test" },
    ]);
    expect(recipientsOf(people, [], {}, none)).toHaveLength(4);
  });

  it("an escalation tells the people it names", () => {
    const notifier = new EmailNotifier({
      config: {
        publicUrl: "https://rein.test",
        people,
        fallback: [],
        email: { smtp: "smtp://127.0.0.1:1", from: "r@x.test", events: ["interrupt.escalated"] },
        links: {},
      },
      links: settings,
      getInterrupt: () => Promise.resolve(undefined),
    });
    const interrupt = {
      policy: {
        groups: ["finance"],
        count: 1,
        notRequester: true,
        requester: "rita",
        digest: "sha256:x",
      },
    } as StoredInterrupt;
    const data = { escalatedTo: { groups: ["support"] } } as InterruptEventData & {
      escalatedTo: { groups: string[] };
    };
    expect(
      notifier.recipients("interrupt.escalated", data, interrupt).map((r) => r.address),
    ).toEqual(["riley@x.test"]);
    expect(
      notifier
        .recipients("interrupt.reminded", data, interrupt)
        .map((r) => r.address)
        .sort(),
    ).toEqual(["alice@x.test", "bob@x.test"]);
    notifier.close();
  });
});

describe("a question outside the console", () => {
  const refund = {
    action: "issue_refund",
    args: { amount: 1450 },
    description: "Refund order 2077",
    allow: { accept: true, edit: true, respond: false, ignore: true },
  };

  it("summarises tool calls and plain questions on one line", () => {
    expect(questionSummary(refund)).toBe('issue_refund {"amount":1450}: Refund order 2077');
    expect(questionSummary({ question: "Ship\nit?" })).toBe("Ship it?");
    expect(questionSummary("x".repeat(300), 10)).toBe(`${"x".repeat(9)}…`);
  });

  it("names a sub-agent's graph after its app's", () => {
    expect(graphLabel({ graph: "ask", path: [{ graph: "ask" }] })).toBe("ask");
    expect(
      graphLabel({
        graph: "refund_agent",
        path: [{ graph: "support-desk" }, { graph: "refund_agent" }],
      }),
    ).toBe("support-desk › refund_agent");
  });

  it("offers approve and reject as allow permits; a plain question gets no links", () => {
    expect(linkDecisions(refund)).toEqual(["approve", "reject"]);
    expect(linkDecisions({ ...refund, allow: { accept: true } })).toEqual(["approve"]);
    expect(linkDecisions({ question: "Ship it?" })).toEqual([]);
  });

  it("states the approvals as 1 of 2: alice", () => {
    const policy = { count: 2, notRequester: true, requester: null, digest: "sha256:x" };
    expect(approvalState(null, null)).toBeNull();
    expect(approvalState(policy, null)).toBe("0 of 2");
    expect(
      approvalState(policy, {
        approvals: [{ actor: "alice", digest: "sha256:x", at: "" }],
        candidate: null,
      }),
    ).toBe("1 of 2: alice");
  });
});
