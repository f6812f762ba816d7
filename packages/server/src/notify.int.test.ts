/**
 * Email notifications and signed decision links across real processes, on SQLite and Postgres:
 * `rein serve --notify FILE` emails a question's approvers (through the webhook outbox) to a
 * local SMTP server the test reads back; `GET` on a link changes nothing; `POST` applies once as
 * the link's principal through the approval policy; used, expired, forged, foreign and stale
 * links are refused with a page and change nothing; an SMTP server that is down gets the mail
 * once it is back.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Webhook } from "standardwebhooks";
import { ReinClient } from "@rein/client";
import { PostgresSaver } from "@rein/postgres";
import { probePostgres, testSchemaName } from "@rein/postgres/testing";
import { acmePerson } from "./testing/people.ts";
import { client } from "./testing/harness.ts";
import { REIN_BIN, launchRein, type Proc } from "./testing/processes.ts";
import { TestReceiver } from "./testing/receiver.ts";
import { TestSmtp, freePort, linksOf, type ReceivedMail } from "./testing/smtp.ts";
import { mintLink } from "./notify/tokens.ts";

const GRAPHS = join(import.meta.dirname, "testing/governed-graphs.ts");

/** Alice and bob approve for finance; carol (finance too) starts the runs; dave is in support. */
const PEOPLE = {
  alice: acmePerson("alice", ["finance"]),
  bob: acmePerson("bob", ["finance"]),
  carol: acmePerson("carol", ["finance"]),
  dave: acmePerson("dave", ["support"]),
  admin: acmePerson("root", [], ["admin"]),
};

const SECRET = "test-link-secret-0123456789abcdefghij";

type Json = Record<string, unknown>;
interface Pending {
  id: string;
  status: string;
  approval: { approvals: { actor: string }[] } | null;
}

const probe = await probePostgres();
const STORES = [
  { name: "sqlite", available: true },
  { name: "postgres", available: probe.available },
];

describe.each(STORES)("email and decision links on $name", ({ name, available }) => {
  let dir: string;
  let smtp: TestSmtp;
  let receiver: TestReceiver;
  let server: Proc;
  let url: string;
  let schema = "";
  const as = (who: keyof typeof PEOPLE) => client(url, PEOPLE[who].token);

  beforeAll(async () => {
    if (!available) return;
    dir = mkdtempSync(join(tmpdir(), "rein-notify-"));
    smtp = await TestSmtp.start();
    receiver = await TestReceiver.start();
    const port = await freePort();
    writeFileSync(join(dir, "tokens.json"), JSON.stringify({ tokens: Object.values(PEOPLE) }));
    writeFileSync(
      join(dir, "notify.json"),
      JSON.stringify({
        publicUrl: `http://127.0.0.1:${port}`,
        people: [
          ...Object.values(PEOPLE)
            .filter((p) => p.groups.length > 0)
            .map((p) => ({
              subject: p.subject,
              tenant: p.tenant,
              groups: p.groups,
              email: `${p.subject.split("@")[0]}@mail.test`,
            })),
          // Finance of another tenant: never told about acme's questions.
          {
            subject: "gina@globex",
            tenant: "globex",
            groups: ["finance"],
            email: "gina@mail.test",
          },
        ],
        fallback: ["ops@mail.test"],
        email: { smtp: smtp.url, from: "Rein <rein@mail.test>" },
        links: { ttl: "1h" },
      }),
    );
    schema = testSchemaName();
    const store =
      name === "sqlite"
        ? ["--db", join(dir, "rein.db")]
        : ["--postgres", probe.url, "--schema", schema];
    server = await launchRein(
      [
        "serve",
        ...store,
        ...["--graphs", GRAPHS, "--tokens", join(dir, "tokens.json")],
        ...["--notify", join(dir, "notify.json"), "--port", String(port), "--log-level", "silent"],
      ],
      /listening on (\S+)/,
      {
        REIN_LINK_SECRET: SECRET,
        REIN_WEBHOOK_POLL_MS: "50",
        REIN_WEBHOOK_BACKOFF_MS: "100",
        REIN_WEBHOOK_MAX_BACKOFF_MS: "300",
      },
    );
    url = server.url ?? "";
  }, 60_000);

  afterAll(async () => {
    if (!available) return;
    server.child.kill("SIGKILL");
    await smtp.down();
    await receiver.close();
    if (name === "postgres") {
      const saver = await PostgresSaver.connect({ connectionString: probe.url, schema });
      await saver.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
      await saver.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** A `governed` refund of `amount` started by carol, paused on its question. */
  async function refund(threadId: string, amount: number): Promise<Pending> {
    expect((await as("carol")("POST", "/threads", { graph: "governed", threadId })).status).toBe(
      201,
    );
    const started = await as("carol")("POST", `/threads/${threadId}/runs`, {
      input: { amount },
      wait: true,
    });
    expect(started.body["status"]).toBe("interrupted");
    return question(threadId);
  }

  /** The thread's question, pending or answered. */
  async function question(threadId: string): Promise<Pending> {
    for (const status of ["pending", "answered"]) {
      const page = await as("carol")<{ items: Pending[] }>(
        "GET",
        `/interrupts?threadId=${threadId}&status=${status}`,
      );
      if (page.body.items[0]) return page.body.items[0];
    }
    throw new Error(`no question on ${threadId}`);
  }

  /** The mails about `threadId`. */
  const about = (threadId: string) => (mail: ReceivedMail) =>
    mail.text.includes(`Thread: ${threadId}\n`);

  async function page(
    method: "GET" | "POST",
    link: string,
  ): Promise<{ status: number; html: string }> {
    const response = await fetch(link, {
      method,
      ...(method === "POST"
        ? { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "" }
        : {}),
    });
    return { status: response.status, html: await response.text() };
  }

  async function mint(
    id: string,
    principal: Json,
    ttl?: string | number,
  ): Promise<{ approve: string; reject: string }> {
    const minted = await as("admin")<{ links: { decision: string; url: string }[] }>(
      "POST",
      `/interrupts/${id}/links`,
      { principal, ...(ttl !== undefined ? { ttl } : {}) },
    );
    expect(minted.status).toBe(200);
    const by = Object.fromEntries(minted.body.links.map((l) => [l.decision, l.url]));
    return { approve: by["approve"]!, reject: by["reject"]! };
  }

  it.skipIf(!available)(
    "emails the approvers with their links; GET changes nothing, POST applies once as them",
    async () => {
      const hook = await as("admin")<{ secret: string }>("POST", "/webhooks", {
        url: receiver.url,
        events: ["interrupt.pending"],
      });
      const asked = await refund("n-1", 5000);
      const mails = await smtp.waitFor(2, about("n-1"));
      // Finance of the tenant approves: not the requester (four eyes), not support, not globex.
      expect(mails.map((m) => m.to[0]).sort()).toEqual(["alice@mail.test", "bob@mail.test"]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(smtp.received.filter(about("n-1"))).toHaveLength(2);
      const alice = mails.find((m) => m.to[0] === "alice@mail.test")!;
      expect(alice.subject).toBe('[governed] Approval needed: refund {"amount":5000}');
      expect(alice.text).toContain("Approvals: 0 of 2");
      expect(alice.text).toContain(
        `Open in console: ${url}/#/threads/n-1/interrupts/${encodeURIComponent(asked.id)}`,
      );
      expect(alice.html).toContain(">Approve</a>");
      const links = linksOf(alice);
      expect(links.approve).toMatch(new RegExp(`^${url}/links/`));
      expect(links.reject).toBeDefined();

      // The signed webhook carries who may answer.
      const mine = () => receiver.received.find((h) => h.data["threadId"] === "n-1");
      await receiver.waitFor(() => mine() !== undefined);
      const pending = mine()!;
      const verified = new Webhook(hook.body.secret).verify(pending.body, {
        "webhook-id": pending.id,
        "webhook-timestamp": pending.timestamp,
        "webhook-signature": pending.signature,
      }) as { data: Json };
      expect(verified.data["approvers"]).toEqual({
        groups: ["finance"],
        count: 2,
        notRequester: true,
      });

      // GET is a confirmation page only: a prefetcher applies nothing.
      const shown = await page("GET", links.approve!);
      expect(shown.status).toBe(200);
      expect(shown.html).toContain("Approve this request?");
      expect(shown.html).toContain('<form method="post"');
      await page("GET", links.approve!);
      expect((await question("n-1")).approval?.approvals).toEqual([]);
      expect((await question("n-1")).status).toBe("pending");

      const applied = await page("POST", links.approve!);
      expect(applied.status).toBe(200);
      expect(applied.html).toContain("Your approval is recorded");
      expect(applied.html).toContain("1 of 2: alice@acme");
      const again = await page("POST", links.approve!);
      expect(again.status).toBe(409);
      expect(again.html).toContain("This link was already used");
      expect(again.html).toContain(`href="${url}/"`);
      expect((await page("GET", links.approve!)).status).toBe(409);
      const after = await question("n-1");
      expect(after.status).toBe("pending");
      expect(after.approval?.approvals.map((a) => a.actor)).toEqual(["alice@acme"]);

      // Bob's link is the second approval: it applies and the run continues.
      const bob = linksOf(mails.find((m) => m.to[0] === "bob@mail.test")!);
      const second = await page("POST", bob.approve!);
      expect(second.status).toBe(200);
      expect(second.html).toContain("Approved as bob@acme");
      expect((await question("n-1")).status).toBe("answered");
      await expect
        .poll(async () => (await as("carol")("GET", "/threads/n-1/state")).body["values"], {
          timeout: 10_000,
        })
        .toMatchObject({ outcome: "refunded 5000" });
      const audit = await as("carol")<{ items: Json[] }>("GET", "/audit?threadId=n-1");
      expect(audit.body.items.map((a) => a["actor"])).toEqual(
        expect.arrayContaining(["alice@acme", "bob@acme"]),
      );
      expect(asked.id).toBeTruthy();
    },
  );

  it.skipIf(!available)(
    "refuses foreign, expired, forged and stale links with a page, and changes nothing",
    async () => {
      const asked = await refund("n-2", 5000);
      // Minting is admin only, for a pending question of the caller's tenant.
      expect(
        (
          await as("alice")("POST", `/interrupts/${asked.id}/links`, {
            principal: { subject: "x" },
          })
        ).status,
      ).toBe(403);
      const missing = await as("admin")("POST", "/interrupts/i_nope/links", {
        principal: { subject: "x" },
      });
      expect(missing.status).toBe(404);
      expect(missing.body["error"]).toBe("not_found");

      // The client mints too.
      const viaClient = await new ReinClient({
        baseUrl: url,
        token: PEOPLE.admin.token,
      }).createDecisionLinks(asked.id, { principal: { subject: "bob@acme" }, ttl: "10m" });
      expect(viaClient.map((l) => l.decision)).toEqual(["approve", "reject"]);
      expect(Date.parse(viaClient[0]!.expiresAt) - Date.now()).toBeLessThanOrEqual(600_000);

      // Dave (support) is not among the approvers: refused 403, nothing recorded.
      const dave = await mint(asked.id, { subject: "dave@acme", groups: ["support"] });
      const daveGet = await page("GET", dave.approve);
      expect(daveGet.status).toBe(403);
      expect(daveGet.html).toContain("Only group finance may answer");
      expect((await page("POST", dave.approve)).status).toBe(403);
      expect((await page("POST", dave.reject)).status).toBe(403);
      // The requester may not approve her own refund.
      const carol = await mint(asked.id, { subject: "carol@acme", groups: ["finance"] });
      const own = await page("POST", carol.approve);
      expect(own.status).toBe(403);
      expect(own.html).toContain("four eyes");

      // Expired.
      const brief = await mint(asked.id, { subject: "alice@acme", groups: ["finance"] }, 1);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const expired = await page("POST", brief.approve);
      expect(expired.status).toBe(410);
      expect(expired.html).toContain("This link has expired");
      expect(expired.html).toContain(`href="${url}/"`);

      // Forged: a tampered signature, or claims altered under the original signature.
      const alice = await mint(asked.id, { subject: "alice@acme", groups: ["finance"] });
      const token = alice.approve.slice(alice.approve.lastIndexOf("/") + 1);
      const [claims, signature] = token.split(".") as [string, string];
      const flipped = `${signature.slice(0, 10)}${signature[10] === "A" ? "B" : "A"}${signature.slice(11)}`;
      const tampered = await page("POST", `${url}/links/${claims}.${flipped}`);
      expect(tampered.status).toBe(400);
      expect(tampered.html).toContain("This link is not valid");
      // Another spelling of the same signature bytes: the last character's two spare bits set.
      const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
      const last = ALPHABET.indexOf(signature.at(-1)!);
      const respelled = `${signature.slice(0, -1)}${ALPHABET[last ^ 1]}`;
      expect(Buffer.from(respelled, "base64url")).toEqual(Buffer.from(signature, "base64url"));
      expect((await page("GET", `${url}/links/${claims}.${respelled}`)).status).toBe(400);
      expect((await page("POST", `${url}/links/${claims}.${respelled}`)).status).toBe(400);
      const rewritten = Buffer.from(
        Buffer.from(claims, "base64url").toString().replace("alice@acme", "bob@acme"),
      ).toString("base64url");
      expect((await page("POST", `${url}/links/${rewritten}.${signature}`)).status).toBe(400);
      expect((await page("GET", `${url}/links/garbage`)).status).toBe(400);
      // A question that changed: a link minted for another payload digest of this question.
      const other = mintLink(
        { secret: SECRET, previousSecrets: [], publicUrl: url, ttlMs: 60_000 },
        {
          interruptId: asked.id,
          threadId: "n-2",
          tenant: "acme",
          digest: `sha256:${"0".repeat(64)}`,
          principal: { subject: "alice@acme", groups: ["finance"], roles: [] },
          decision: "approve",
        },
      );
      const changed = await page("POST", other.url);
      expect(changed.status).toBe(409);
      expect(changed.html).toContain("The question changed");
      const untouched = await question("n-2");
      expect(untouched.status).toBe("pending");
      expect(untouched.approval?.approvals).toEqual([]);

      // Stale: the question is settled (alice rejects it); bob's link no longer applies.
      const bob = await mint(asked.id, { subject: "bob@acme", groups: ["finance"] });
      expect((await page("POST", alice.reject)).status).toBe(200);
      const settled = await question("n-2");
      expect(settled.status).toBe("answered");
      const stale = await page("POST", bob.approve);
      expect(stale.status).toBe(409);
      expect(stale.html).toContain("This question was already settled");
      expect((await page("GET", bob.approve)).status).toBe(409);
      const audit = await as("carol")<{ items: Json[] }>("GET", "/audit?threadId=n-2");
      expect(audit.body.items.filter((a) => a["actor"] === "bob@acme")).toEqual([]);
    },
  );

  it.skipIf(!available)("a link to a question another question replaced is refused", async () => {
    const first = await refund("n-6", 5000);
    const alice = await mint(first.id, { subject: "alice@acme", groups: ["finance"] });
    // New input cancels the waiting question; the run asks again, for another amount.
    const again = await as("carol")("POST", "/threads/n-6/runs", {
      input: { amount: 6000 },
      onPending: "cancel",
      wait: true,
    });
    expect(again.body["status"]).toBe("interrupted");
    const second = await question("n-6");
    expect(second.id).not.toBe(first.id);
    const stale = await page("POST", alice.approve);
    expect(stale.status).toBe(409);
    expect(stale.html).toContain("This question was already settled");
    expect((await question("n-6")).approval?.approvals).toEqual([]);
  });

  it.skipIf(!available)(
    "two concurrent POSTs of one link: one applies, one is told it was used",
    async () => {
      // Under 1,000 the refund has no policy: the fallback address is told (no links: no principal).
      const asked = await refund("n-3", 10);
      const [fallback] = await smtp.waitFor(1, about("n-3"));
      expect(fallback!.to).toEqual(["ops@mail.test"]);
      expect(linksOf(fallback!)).toEqual({});
      const alice = await mint(asked.id, { subject: "alice@acme" });
      const outcomes = await Promise.all([
        page("POST", alice.approve),
        page("POST", alice.approve),
      ]);
      expect(outcomes.map((o) => o.status).sort()).toEqual([200, 409]);
      expect(outcomes.find((o) => o.status === 409)!.html).toContain("already used");
      await expect
        .poll(async () => (await as("carol")("GET", "/threads/n-3/state")).body["values"], {
          timeout: 10_000,
        })
        .toMatchObject({ outcome: "refunded 10" });
      const audit = await as("carol")<{ items: Json[] }>("GET", "/audit?threadId=n-3");
      expect(audit.body.items.filter((a) => a["actor"] === "alice@acme")).toHaveLength(1);
    },
  );

  it.skipIf(!available)("an SMTP server that is down gets the mail once it is back", async () => {
    await smtp.down();
    await refund("n-4", 5000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(smtp.received.filter(about("n-4"))).toEqual([]);
    await smtp.up();
    const mails = await smtp.waitFor(2, about("n-4"));
    expect(mails.map((m) => m.to[0]).sort()).toEqual(["alice@mail.test", "bob@mail.test"]);
  });
  it.skipIf(!available || name !== "postgres")(
    "on Postgres a link is single-use across processes: two servers, one click each at once",
    async () => {
      const port = await freePort();
      const second = await launchRein(
        [
          "serve",
          ...["--postgres", probe.url, "--schema", schema],
          ...["--graphs", GRAPHS, "--tokens", join(dir, "tokens.json")],
          ...[
            "--notify",
            join(dir, "notify.json"),
            "--port",
            String(port),
            "--log-level",
            "silent",
          ],
        ],
        /listening on (\S+)/,
        { REIN_LINK_SECRET: SECRET, REIN_WEBHOOK_POLL_MS: "50" },
      );
      // A worker with the same config keeps the one subscription and delivers too.
      const worker = await launchRein(
        [
          "worker",
          ...["--postgres", probe.url, "--schema", schema, "--graphs", GRAPHS],
          ...["--notify", join(dir, "notify.json")],
        ],
        /worker ready/,
        { REIN_LINK_SECRET: SECRET, REIN_WEBHOOK_POLL_MS: "50" },
      );
      try {
        // Logged before the ready line, but on the other pipe: wait for it to be read.
        for (const proc of [second, worker])
          await vi.waitFor(
            () => expect(proc.log()).toContain("notifier subscription notify:email (kept)"),
            { timeout: 5_000, interval: 25 },
          );
        // Three processes deliver: the fallback is mailed once.
        const asked = await refund("n-5", 10);
        await smtp.waitFor(1, about("n-5"));
        const alice = await mint(asked.id, { subject: "alice@acme" });
        const token = alice.approve.slice(alice.approve.lastIndexOf("/"));
        const outcomes = await Promise.all([
          page("POST", alice.approve),
          page("POST", `${second.url ?? ""}/links${token}`),
        ]);
        expect(outcomes.map((o) => o.status).sort()).toEqual([200, 409]);
        await expect
          .poll(async () => (await as("carol")("GET", "/threads/n-5/state")).body["values"], {
            timeout: 10_000,
          })
          .toMatchObject({ outcome: "refunded 10" });
        expect(smtp.received.filter(about("n-5"))).toHaveLength(1);
      } finally {
        second.child.kill("SIGKILL");
        worker.child.kill("SIGKILL");
      }
    },
  );
});

describe("rein serve --notify refuses a bad config at start", () => {
  const serveWith = (file: string, env: Record<string, string> = {}) =>
    new Promise<{ code: number; stderr: string }>((done) => {
      const dir = mkdtempSync(join(tmpdir(), "rein-notify-bad-"));
      execFile(
        process.execPath,
        [
          REIN_BIN,
          "serve",
          "--open",
          "--db",
          join(dir, "rein.db"),
          "--graphs",
          GRAPHS,
          "--port",
          "0",
          "--notify",
          file,
        ],
        { env: { ...process.env, REIN_LINK_SECRET: "", ...env }, timeout: 30_000 },
        (error, _stdout, stderr) => {
          rmSync(dir, { recursive: true, force: true });
          done({ code: typeof error?.code === "number" ? error.code : 0, stderr });
        },
      );
    });

  it("names what is wrong and exits 2: a bad field, a missing file, email without a link key", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rein-notify-cfg-"));
    try {
      writeFileSync(
        join(dir, "bad.json"),
        JSON.stringify({ publicUrl: "ftp://x", fallback: ["nope"] }),
      );
      const bad = await serveWith(join(dir, "bad.json"));
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain(
        "is not a valid notifier config: publicUrl: an http(s) URL; fallback.0",
      );
      const missing = await serveWith(join(dir, "missing.json"));
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("cannot be read");
      writeFileSync(
        join(dir, "nokey.json"),
        JSON.stringify({
          publicUrl: "http://127.0.0.1:1",
          email: { smtp: "smtp://127.0.0.1:1", from: "r@x.test" },
        }),
      );
      const nokey = await serveWith(join(dir, "nokey.json"), { REIN_LINK_SECRET: "" });
      expect(nokey.code).toBe(2);
      expect(nokey.stderr).toContain("set REIN_LINK_SECRET");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
