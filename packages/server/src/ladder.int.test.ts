/**
 * The escalation ladder across real processes on Postgres: process A (`rein serve`) raises two
 * questions and is SIGKILLed before their first step; process B (`rein serve`) and process C
 * (`rein worker`), whose deadline timers race, continue both ladders. Each step is taken once
 * (one audit line, one event id), a manager's answer is 403 `not_allowed` before the escalation
 * and applies after it, the unanswered question is defaulted, the webhooks arrive as
 * `interrupt.reminded`, `interrupt.escalated` (with `escalatedTo`), `interrupt.expired`, and
 * `rein audit verify` passes.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import type { ThreadId } from "@rein/core";
import { PostgresSaver } from "@rein/postgres";
import { probePostgres, testSchemaName } from "@rein/postgres/testing";
import type { TokenConfig } from "./auth.ts";
import { client } from "./testing/harness.ts";
import { REIN_BIN, launchRein, type Proc } from "./testing/processes.ts";
import { TestReceiver, type ReceivedHook } from "./testing/receiver.ts";

const run = promisify(execFile);
const GRAPHS = resolve(import.meta.dirname, "testing/ladder-graphs.ts");

/** Timers look every 50 ms; deliveries are polled fast and retried soon. */
const ENV = {
  REIN_DEADLINE_INTERVAL_MS: "50",
  REIN_WEBHOOK_POLL_MS: "50",
  REIN_WEBHOOK_LEASE_MS: "1500",
  REIN_WEBHOOK_BACKOFF_MS: "100",
};

/** The ladder of both questions (ms after they are raised). */
const LADDER = { remindMs: 2500, escalateMs: 6000, timeoutMs: 10_500 };

const token = (subject: string, extra: Partial<TokenConfig> = {}): TokenConfig => ({
  token: `${subject}-ladder-token-0123456`,
  subject,
  tenant: "acme",
  scopes: ["read", "run", "resume"],
  ...extra,
});
const people = {
  admin: token("root", { scopes: ["admin"] }),
  rita: token("rita"),
  sam: token("sam", { groups: ["support"] }),
  maria: token("maria", { groups: ["managers"] }),
};

const probe = await probePostgres();

type Json = Record<string, unknown>;
interface Escalation {
  stage: string;
  escalatedTo: unknown;
  remindAt: string[];
}

describe.skipIf(!probe.available)("the escalation ladder across processes on postgres", () => {
  const procs: Proc[] = [];
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const p of procs.splice(0)) p.child.kill("SIGKILL");
    for (const step of cleanup.splice(0)) await step();
  });

  it("a ladder whose process died continues on the next ones: each step once, audited, as webhooks", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rein-ladder-"));
    const schema = testSchemaName();
    const receiver = await TestReceiver.start();
    cleanup.push(
      () => receiver.close(),
      async () => {
        const saver = await PostgresSaver.connect({ connectionString: probe.url, schema });
        await saver.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
        await saver.close();
      },
      () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
    );
    writeFileSync(join(dir, "tokens.json"), JSON.stringify(Object.values(people)));
    const store = ["--postgres", probe.url, "--schema", schema];
    const serve = [
      "serve",
      ...store,
      ...["--graphs", GRAPHS, "--tokens", join(dir, "tokens.json")],
      ...["--port", "0", "--log-level", "silent"],
    ];

    const a = await launchRein(serve, /listening on (\S+)/, ENV);
    procs.push(a);
    const as = (who: TokenConfig, url = a.url!) => client(url, who.token);
    const hook = await as(people.admin)<Json>("POST", "/webhooks", {
      url: receiver.url,
      events: [
        "interrupt.pending",
        "interrupt.reminded",
        "interrupt.escalated",
        "interrupt.answered",
        "interrupt.expired",
      ],
    });
    expect(hook.status).toBe(201);

    const ids: Record<string, string> = {};
    const raised = Date.now();
    for (const threadId of ["answered-after-escalation", "defaulted"]) {
      await as(people.rita)("POST", "/threads", { graph: "escalating", threadId });
      const started = await as(people.rita)<{ interrupts: { id: string }[] }>(
        "POST",
        `/threads/${threadId}/runs`,
        { input: LADDER, wait: true },
      );
      ids[threadId] = started.body.interrupts[0]!.id;
    }
    // Before the escalation a manager may not answer: 403, and nothing changes.
    const early = await as(people.maria)<Json>(
      "POST",
      "/threads/answered-after-escalation/resume",
      { resume: "approve" },
    );
    expect(early.status).toBe(403);
    expect(early.body).toMatchObject({ error: "not_allowed", details: { rule: "not_listed" } });
    const queue = await as(people.sam)<{ items: { id: string; escalation?: Escalation }[] }>(
      "GET",
      "/interrupts",
    );
    const item = queue.body.items.find((i) => i.id === ids["answered-after-escalation"]);
    expect(item?.escalation).toMatchObject({
      stage: "none",
      escalatedTo: { groups: ["managers"] },
    });

    a.child.kill("SIGKILL");
    await new Promise((done) => a.child.once("exit", done));
    // The kill came before the first step was due: the next processes take every step.
    expect(Date.now() - raised).toBeLessThan(LADDER.remindMs);
    expect(receiver.received.filter((h) => h.type !== "interrupt.pending")).toEqual([]);

    const [b, c] = await Promise.all([
      launchRein(serve, /listening on (\S+)/, ENV),
      launchRein(["worker", ...store, "--graphs", GRAPHS], /worker ready/, ENV),
    ]);
    procs.push(b, c);
    const types = (threadId: string): string[] =>
      distinct(receiver.accepted)
        .filter((h) => h.data["threadId"] === threadId)
        .map((h) => h.type);
    await receiver.waitFor(
      () => types("answered-after-escalation").includes("interrupt.escalated"),
      15_000,
      "the escalation",
    );
    const listed = await as(people.sam, b.url!)<{
      items: { id: string; escalation?: Escalation }[];
    }>("GET", "/interrupts");
    const escalatedItem = listed.body.items.find((i) => i.id === ids["answered-after-escalation"]);
    expect(escalatedItem?.escalation?.stage).toBe("escalated");
    const late = await as(people.maria, b.url!)<Json>(
      "POST",
      "/threads/answered-after-escalation/resume",
      { resume: "approve" },
    );
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ status: "done", values: { decision: "approve" } });

    await receiver.waitFor(
      () => types("defaulted").includes("interrupt.expired"),
      15_000,
      "the expiry",
    );
    // Give a racing timer time to (wrongly) take a step twice before counting.
    await new Promise((done) => setTimeout(done, 500));
    expect(types("answered-after-escalation")).toEqual([
      "interrupt.pending",
      "interrupt.reminded",
      "interrupt.escalated",
      "interrupt.answered",
    ]);
    expect(types("defaulted")).toEqual([
      "interrupt.pending",
      "interrupt.reminded",
      "interrupt.escalated",
      "interrupt.expired",
    ]);
    const escalated = distinct(receiver.accepted).find(
      (h) => h.type === "interrupt.escalated" && h.data["threadId"] === "defaulted",
    );
    expect(escalated?.data).toMatchObject({
      interruptId: ids["defaulted"],
      status: "pending",
      escalatedTo: { groups: ["managers"] },
    });

    const saver = await PostgresSaver.connect({ connectionString: probe.url, schema });
    try {
      for (const [threadId, last] of [
        ["answered-after-escalation", "answer:maria"],
        ["defaulted", "timeout:system:timer"],
      ] as const) {
        const audit = await saver.listAudit({ threadId: threadId as ThreadId });
        expect(audit.items.map((l) => `${l.action}:${l.actor}`)).toEqual([
          "remind:system:timer",
          "escalate:system:timer",
          last,
        ]);
      }
      const defaulted = await saver.getInterrupt(ids["defaulted"] as never);
      expect(defaulted?.answer).toBe("defaulted");
    } finally {
      await saver.close();
    }
    const { stdout } = await run(process.execPath, [
      REIN_BIN,
      ...["audit", "verify", "--json", ...store],
    ]);
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, checked: 6 });
  }, 60_000);
});

/** The hooks accepted, one per webhook id (a delivery may come again under its id), in order. */
function distinct(hooks: readonly ReceivedHook[]): ReceivedHook[] {
  const seen = new Set<string>();
  return hooks.filter((h) => (seen.has(h.id) ? false : (seen.add(h.id), true)));
}
