/**
 * Background runs over real HTTP, one suite on SQLite and on Postgres (with the LISTEN/NOTIFY
 * fan-out a deployment runs): every accepted request is done or refused, never dropped or
 * doubled — a second start on a busy thread, one Idempotency-Key sent twice (or with another
 * body), identical requests racing, and the four multitask policies.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { PostgresSaver } from "@rein/postgres";
import type { RunId, ThreadId } from "@rein/core";
import { hookSaver } from "@rein/core/testing/process";
import { startScaleOut, type ScaleOut } from "./scale/index.ts";
import { ledgerCharges } from "./testing/graphs.ts";
import {
  client,
  postgresBackend,
  readSse,
  snapshotStore,
  sqliteBackend,
  startTestServer,
  TOKENS,
  type Backend,
  type TestServer,
  type TestStore,
} from "./testing/harness.ts";

const pg = await postgresBackend();
if (!pg.available) console.warn(`Postgres suites skipped: no server at ${pg.url}`);
const backends: Backend[] = [sqliteBackend, pg];

type Json = Record<string, unknown>;

function chargesOf(threadId: string): string[] {
  return ledgerCharges.filter((c) => c.threadId === threadId).map((c) => c.tag);
}

/** Reads until `done` holds (every 25 ms, for up to 15 s); the value that held. */
function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await read();
      if (done(value)) return value;
      throw new Error(`still waiting, last read: ${JSON.stringify(value)}`);
    },
    { timeout: 15_000, interval: 25 },
  );
}

for (const backend of backends) {
  describe.skipIf(!backend.available)(`background runs on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;
    let scale: ScaleOut | null = null;
    let alice: ReturnType<typeof client>;

    beforeAll(() => {
      ledgerCharges.length = 0;
    });

    beforeEach(async () => {
      store = await backend.create();
      if (store.store instanceof PostgresSaver)
        scale = await startScaleOut({
          store: store.store,
          connectionString: pg.url,
        });
      server = await startTestServer(store.store, scale ? { scale, concurrency: 2 } : {});
      alice = client(server.url, TOKENS["alice"]!.token);
    });

    afterEach(async () => {
      await server.close();
      await scale?.stop();
      scale = null;
      await store.destroy();
    });

    afterAll(() => {
      ledgerCharges.length = 0;
    });

    const runOf = (threadId: string, runId: string) =>
      alice<{ status: string; error?: Json | null }>("GET", `/threads/${threadId}/runs/${runId}`);

    const finished = (threadId: string, runId: string) =>
      until(
        () => runOf(threadId, runId),
        (r) => r.status === 200 && !["queued", "running"].includes(r.body.status),
      );

    it("two background starts back to back on an idle thread: one 202 whose run id reads at once and finishes, one 409 that changed nothing", async () => {
      await alice("POST", "/threads", { graph: "ledger", threadId: "b-two" });
      const first = await alice<{ runId: string; status: string }>("POST", "/threads/b-two/runs", {
        input: { tag: "one", ms: 300 },
      });
      // Read at once: never a 404 for a run id the client was just given.
      const read = await runOf("b-two", first.body.runId);
      const before = await snapshotStore(store.store);
      const second = await alice<{ error: string; details: Json }>("POST", "/threads/b-two/runs", {
        input: { tag: "two" },
      });
      expect(first.status).toBe(202);
      expect(["queued", "running"]).toContain(first.body.status);
      expect(read.status).toBe(200);
      expect(["queued", "running"]).toContain(read.body.status);
      expect(second.status).toBe(409);
      expect(second.body.error).toBe("thread_busy");
      expect((second.body.details["latest"] as Json)["runId"]).toBe(first.body.runId);
      // The refusal wrote nothing (the running run may have moved on; compare its run count).
      expect(JSON.stringify(before).length).toBeGreaterThan(0);
      const done = await finished("b-two", first.body.runId);
      expect(done.body.status).toBe("done");
      const runs = await alice<{ items: Json[] }>("GET", "/threads/b-two/runs");
      expect(runs.body.items).toHaveLength(1);
      expect(chargesOf("b-two")).toEqual(["one"]);
    });

    it("a background start sent twice with one Idempotency-Key is one run and one charge; the key with another body is 422 and stores nothing", async () => {
      await alice("POST", "/threads", { graph: "ledger", threadId: "b-key" });
      const headers = { "idempotency-key": "charge-42" };
      const body = { input: { tag: "charge", ms: 50 } };
      const [a, b] = await Promise.all([
        alice<{ runId: string }>("POST", "/threads/b-key/runs", body, headers),
        alice<{ runId: string }>("POST", "/threads/b-key/runs", body, headers),
      ]);
      expect([a.status, b.status]).toEqual([202, 202]);
      expect(b.body.runId).toBe(a.body.runId);
      await finished("b-key", a.body.runId);
      const again = await alice<{ runId: string }>("POST", "/threads/b-key/runs", body, headers);
      expect(again.status).toBe(202);
      expect(again.body.runId).toBe(a.body.runId);
      const before = await snapshotStore(store.store);
      const reused = await alice<{ error: string; message: string }>(
        "POST",
        "/threads/b-key/runs",
        { input: { tag: "other" } },
        headers,
      );
      expect(reused.status).toBe(422);
      expect(reused.body.error).toBe("idempotency_key_reused");
      expect(await snapshotStore(store.store)).toBe(before);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(chargesOf("b-key")).toEqual(["charge"]);
      const state = await alice<{ values: { charged: string[] } }>("GET", "/threads/b-key/state");
      expect(state.body.values.charged).toEqual(["charge"]);
    });

    it("identical concurrent wait:true starts with one key get the original outcome, never a 409", async () => {
      await alice("POST", "/threads", { graph: "ledger", threadId: "b-same" });
      const headers = { "idempotency-key": "same-1" };
      const body = { input: { tag: "same", ms: 150 }, wait: true };
      const replies = await Promise.all(
        [0, 1, 2, 3].map(() =>
          alice<{ runId: string; status: string }>("POST", "/threads/b-same/runs", body, headers),
        ),
      );
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(new Set(replies.map((r) => r.body.runId)).size).toBe(1);
      expect(replies.every((r) => r.body.status === "done")).toBe(true);
      expect(chargesOf("b-same")).toEqual(["same"]);
    });

    it("a resume repeated with its key applies once; the key with another answer is 422 and changes nothing", async () => {
      await alice("POST", "/threads", { graph: "ask", threadId: "b-resume" });
      await alice("POST", "/threads/b-resume/runs", { input: {}, wait: true });
      const headers = { "idempotency-key": "answer-1" };
      const answer = { resume: { text: "yes" } };
      const [a, b] = await Promise.all([
        alice<{ status: string; values: Json }>(
          "POST",
          "/threads/b-resume/resume",
          answer,
          headers,
        ),
        alice<{ status: string; values: Json }>(
          "POST",
          "/threads/b-resume/resume",
          answer,
          headers,
        ),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(a.body.values["answer"]).toBe("yes");
      expect(b.body).toEqual(a.body);
      const before = await snapshotStore(store.store);
      const other = await alice<{ error: string }>(
        "POST",
        "/threads/b-resume/resume",
        { resume: { text: "no" } },
        headers,
      );
      expect(other.status).toBe(422);
      expect(other.body.error).toBe("idempotency_key_reused");
      expect(await snapshotStore(store.store)).toBe(before);
      const audit = await alice<{ items: { action: string }[] }>("GET", "/audit?threadId=b-resume");
      expect(audit.body.items.filter((x) => x.action === "answer")).toHaveLength(1);
    });

    it("creates of one thread id racing without a key: exactly one is created, the others are refused, and the winner's tenant and metadata stand", async () => {
      const bob = client(server.url, TOKENS["bob"]!.token);
      const attempts = Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? alice : bob)<{ threadId: string; error?: string }>("POST", "/threads", {
          graph: "ask",
          threadId: "race-create",
          metadata: { attempt: i },
        }),
      );
      const replies = await Promise.all(attempts);
      const created = replies.flatMap((r, i) => (r.status === 201 ? [i] : []));
      expect(created).toHaveLength(1);
      expect(replies.filter((r) => r.status === 400).map((r) => r.body.error)).toEqual(
        Array.from({ length: 7 }, () => "invalid_input"),
      );
      const winner = created[0]!;
      const thread = await store.store.getThread("race-create" as ThreadId);
      expect(thread?.tenant).toBe(winner % 2 === 0 ? "acme" : "globex");
      expect(thread?.metadata).toMatchObject({ attempt: winner });

      // The claim leaves with the thread: a deleted id can be created again.
      const owner = winner % 2 === 0 ? client(server.url, TOKENS["admin"]!.token) : bob;
      expect((await owner("DELETE", "/threads/race-create")).status).toBe(204);
      expect(
        (await alice("POST", "/threads", { graph: "ask", threadId: "race-create" })).status,
      ).toBe(201);
    });

    it("Idempotency-Key on every other mutating route: a repeat gets the original outcome once, another body is 422 and changes nothing", async () => {
      // POST /threads: without an id, the id derives from the key.
      const key = { "idempotency-key": "create-1" };
      const [c1, c2] = await Promise.all([
        alice<{ threadId: string }>("POST", "/threads", { graph: "ask" }, key),
        alice<{ threadId: string }>("POST", "/threads", { graph: "ask" }, key),
      ]);
      expect([c1.status, c2.status]).toEqual([201, 201]);
      expect(c2.body.threadId).toBe(c1.body.threadId);
      const threadId = c1.body.threadId;
      expect((await store.store.listThreads({ limit: 100 })).items.map((t) => t.threadId)).toEqual([
        threadId,
      ]);
      let before = await snapshotStore(store.store);
      const otherCreate = await alice<{ error: string }>(
        "POST",
        "/threads",
        { graph: "slow" },
        key,
      );
      expect(otherCreate.status).toBe(422);
      expect(otherCreate.body.error).toBe("idempotency_key_reused");
      expect(await snapshotStore(store.store)).toBe(before);

      // POST /threads/:id/steer: one record for both attempts.
      await alice("POST", `/threads/${threadId}/runs`, { input: {}, wait: true });
      const steerKey = { "idempotency-key": "steer-1" };
      const [s1, s2] = await Promise.all([
        alice<{ id: string }>("POST", `/threads/${threadId}/steer`, { text: "be brief" }, steerKey),
        alice<{ id: string }>("POST", `/threads/${threadId}/steer`, { text: "be brief" }, steerKey),
      ]);
      expect([s1.status, s2.status]).toEqual([201, 201]);
      expect(s2.body).toEqual(s1.body);
      expect(await store.store.listSteering(threadId as ThreadId)).toHaveLength(1);
      before = await snapshotStore(store.store);
      const otherSteer = await alice<{ error: string }>(
        "POST",
        `/threads/${threadId}/steer`,
        { text: "be long" },
        steerKey,
      );
      expect(otherSteer.status).toBe(422);
      expect(otherSteer.body.error).toBe("idempotency_key_reused");
      expect(await snapshotStore(store.store)).toBe(before);

      // POST /threads/:id/runs/stream: the key is tied to its first body too.
      await alice("POST", "/threads", { graph: "slow", threadId: "b-stream-key" });
      const streamKey = { "idempotency-key": "stream-1" };
      const first = await fetch(`${server.url}/threads/b-stream-key/runs/stream`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${TOKENS["alice"]!.token}`,
          "content-type": "application/json",
          ...streamKey,
        },
        body: JSON.stringify({ input: { steps: 1, ms: 1 } }),
      });
      expect((await readSse(first)).at(-1)?.event).toBe("end");
      before = await snapshotStore(store.store);
      const otherStream = await alice<{ error: string }>(
        "POST",
        "/threads/b-stream-key/runs/stream",
        { input: { steps: 2, ms: 1 } },
        streamKey,
      );
      expect(otherStream.status).toBe(422);
      expect(otherStream.body.error).toBe("idempotency_key_reused");
      expect(await snapshotStore(store.store)).toBe(before);
    });

    it("multitask enqueue: runs after the current run, in the order accepted, each once", async () => {
      await alice("POST", "/threads", { graph: "ledger", threadId: "b-enq" });
      const first = await alice<{ runId: string }>("POST", "/threads/b-enq/runs", {
        input: { tag: "first", ms: 300 },
      });
      const second = await alice<{ runId: string; status: string }>("POST", "/threads/b-enq/runs", {
        input: { tag: "second", ms: 10 },
        multitask: "enqueue",
      });
      const third = await alice<{ runId: string; status: string }>("POST", "/threads/b-enq/runs", {
        input: { tag: "third", ms: 10 },
        multitask: "enqueue",
      });
      expect(second.status).toBe(202);
      expect(third.status).toBe(202);
      expect(second.body.status).toBe("queued");
      expect((await runOf("b-enq", third.body.runId)).body.status).toBe("queued");
      for (const run of [first, second, third])
        expect((await finished("b-enq", run.body.runId)).body.status).toBe("done");
      expect(chargesOf("b-enq")).toEqual(["first", "second", "third"]);
      const state = await alice<{ values: { charged: string[] } }>("GET", "/threads/b-enq/state");
      expect(state.body.values.charged).toEqual(["first", "second", "third"]);
    });

    it("multitask enqueue with wait: true answers with the queued run's own result", async () => {
      await alice("POST", "/threads", { graph: "ledger", threadId: "b-wait" });
      await alice("POST", "/threads/b-wait/runs", { input: { tag: "first", ms: 200 } });
      const waited = await alice<{ status: string; values: { charged: string[] } }>(
        "POST",
        "/threads/b-wait/runs",
        { input: { tag: "second" }, multitask: "enqueue", wait: true },
      );
      expect(waited.status).toBe(200);
      expect(waited.body.status).toBe("done");
      expect(waited.body.values.charged).toEqual(["first", "second"]);
    });

    it("multitask interrupt: the current run is cancelled at its step boundary with its checkpoints kept; the new run runs", async () => {
      await alice("POST", "/threads", { graph: "ledger", threadId: "b-int" });
      await alice("POST", "/threads/b-int/runs", { input: { tag: "kept" }, wait: true });
      const slow = await alice<{ runId: string }>("POST", "/threads/b-int/runs", {
        input: { tag: "slow", ms: 5_000 },
      });
      await until(
        () => runOf("b-int", slow.body.runId),
        (r) => r.body.status === "running",
      );
      const newer = await alice<{ runId: string }>("POST", "/threads/b-int/runs", {
        // The interrupted run's input (ms: 5000) stays in the state: set ms again.
        input: { tag: "newer", ms: 0 },
        multitask: "interrupt",
      });
      expect(newer.status).toBe(202);
      expect((await finished("b-int", slow.body.runId)).body.status).toBe("cancelled");
      expect((await finished("b-int", newer.body.runId)).body.status).toBe("done");
      expect(chargesOf("b-int")).toEqual(["kept", "newer"]);
      const history = await alice<{ items: { runId: string }[] }>(
        "GET",
        "/threads/b-int/history?limit=50",
      );
      // The cancelled run's input checkpoint is still in the thread's history.
      expect(history.body.items.some((c) => c.runId === slow.body.runId)).toBe(true);
      const state = await alice<{ values: { tag: string; charged: string[] } }>(
        "GET",
        "/threads/b-int/state",
      );
      expect(state.body.values.charged).toEqual(["kept", "newer"]);
    });

    it("multitask rollback: the current run is cancelled and its steps discarded; the new run starts from before them", async () => {
      await alice("POST", "/threads", { graph: "ledger", threadId: "b-rb" });
      await alice("POST", "/threads/b-rb/runs", { input: { tag: "base" }, wait: true });
      const slow = await alice<{ runId: string }>("POST", "/threads/b-rb/runs", {
        input: { tag: "discarded", ms: 5_000 },
      });
      await until(
        () => runOf("b-rb", slow.body.runId),
        (r) => r.body.status === "running",
      );
      const newer = await alice<{ runId: string }>("POST", "/threads/b-rb/runs", {
        input: { tag: "after-rollback" },
        multitask: "rollback",
      });
      expect((await finished("b-rb", slow.body.runId)).body.status).toBe("cancelled");
      expect((await finished("b-rb", newer.body.runId)).body.status).toBe("done");
      const state = await alice<{ values: { tag: string; charged: string[] } }>(
        "GET",
        "/threads/b-rb/state",
      );
      // The rolled-back run's input ("discarded") is not in the state the new run built on.
      expect(state.body.values).toMatchObject({ tag: "after-rollback" });
      expect(state.body.values.charged).toEqual(["base", "after-rollback"]);
    });

    it("multitask rollback of a thread's first run is refused (nothing to roll back to) and changes nothing", async () => {
      await alice("POST", "/threads", { graph: "ledger", threadId: "b-rb0" });
      const slow = await alice<{ runId: string }>("POST", "/threads/b-rb0/runs", {
        input: { tag: "first", ms: 600 },
      });
      await until(
        () => runOf("b-rb0", slow.body.runId),
        (r) => r.body.status === "running",
      );
      const refused = await alice<{ error: string }>("POST", "/threads/b-rb0/runs", {
        input: { tag: "x" },
        multitask: "rollback",
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe("invalid_input");
      expect((await finished("b-rb0", slow.body.runId)).body.status).toBe("done");
      const runs = await alice<{ items: Json[] }>("GET", "/threads/b-rb0/runs");
      expect(runs.body.items).toHaveLength(1);
    });

    it("a queued run behind a thread held elsewhere waits without spinning against the store, and starts once the thread is free", async () => {
      await server.close();
      let acquires = 0;
      const counted = hookSaver(store.store, {
        before: { acquireLease: () => void (acquires += 1) },
      });
      server = await startTestServer(counted, { leaseTtlMs: 2_000, ...(scale ? { scale } : {}) });
      alice = client(server.url, TOKENS["alice"]!.token);
      await alice("POST", "/threads", { graph: "ledger", threadId: "b-held" });
      // Another process holds the thread (its lease, not a run of this server).
      expect(
        await store.store.acquireLease("b-held" as ThreadId, "elsewhere", 60_000),
      ).not.toBeNull();
      const queued = await alice<{ runId: string }>("POST", "/threads/b-held/runs", {
        input: { tag: "held" },
        multitask: "enqueue",
      });
      expect(queued.status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // One try at admission, and at most one per sweep (a quarter of the 2 s lease) since.
      expect(acquires).toBeLessThanOrEqual(4);
      expect((await runOf("b-held", queued.body.runId)).body.status).toBe("queued");
      await store.store.releaseLease("b-held" as ThreadId, "elsewhere");
      expect((await finished("b-held", queued.body.runId)).body.status).toBe("done");
      expect(chargesOf("b-held")).toEqual(["held"]);
    });

    it("a wait:true start does not pass a run queued before it: 409 naming the queued run, and nothing changes", async () => {
      await server.close();
      // A long lease: the sweep (a quarter of it) stays away while the test looks.
      server = await startTestServer(store.store, {
        leaseTtlMs: 60_000,
        ...(scale ? { scale } : {}),
      });
      alice = client(server.url, TOKENS["alice"]!.token);
      await alice("POST", "/threads", { graph: "ledger", threadId: "b-line" });
      // Another process holds the thread briefly and dies: its lease expires, and nobody tells
      // this server, whose queued run waits for the sweep.
      expect(await store.store.acquireLease("b-line" as ThreadId, "elsewhere", 400)).not.toBeNull();
      const queued = await alice<{ runId: string }>("POST", "/threads/b-line/runs", {
        input: { tag: "first" },
        multitask: "enqueue",
      });
      expect(queued.status).toBe(202);
      await expect
        .poll(() => store.store.getLease("b-line" as ThreadId), { timeout: 600, interval: 20 })
        .toBeUndefined();
      expect((await runOf("b-line", queued.body.runId)).body.status).toBe("queued");
      const before = await snapshotStore(store.store);
      const late = await alice<{ error: string; message: string }>("POST", "/threads/b-line/runs", {
        input: { tag: "late" },
        wait: true,
      });
      expect(late.status).toBe(409);
      expect(late.body.error).toBe("thread_busy");
      expect(late.body.message).toContain(queued.body.runId);
      expect(await snapshotStore(store.store)).toBe(before);
      expect(chargesOf("b-line")).toEqual([]);
    });

    it("a run joined right after its 202 streams from its first event to its end", async () => {
      await alice("POST", "/threads", { graph: "slow", threadId: "b-join" });
      const accepted = await alice<{ runId: string }>("POST", "/threads/b-join/runs", {
        input: { steps: 4, ms: 40 },
      });
      const started = Date.now();
      const joined = await fetch(
        `${server.url}/threads/b-join/runs/${accepted.body.runId}/stream?streamMode=custom`,
        { headers: { authorization: `Bearer ${TOKENS["alice"]!.token}` } },
      );
      expect(joined.status).toBe(200);
      const events = await readSse(joined, (e) => e.event === "end");
      expect(events.filter((e) => e.event === "custom")).toHaveLength(4);
      expect(events.at(-1)?.event).toBe("end");
      // Picked up at once, not at a poll: 4 × 40 ms of work plus overheads.
      expect(Date.now() - started).toBeLessThan(3_000);
    });

    it("a queued run whose thread is paused on interrupts when its turn comes is refused on its row, with the reason", async () => {
      await alice("POST", "/threads", { graph: "ask", threadId: "b-paused" });
      const first = await alice<{ runId: string }>("POST", "/threads/b-paused/runs", {
        input: {},
      });
      const queued = await alice<{ runId: string }>("POST", "/threads/b-paused/runs", {
        input: {},
        multitask: "enqueue",
      });
      expect(queued.status).toBe(202);
      expect((await finished("b-paused", first.body.runId)).body.status).toBe("interrupted");
      const refused = await finished("b-paused", queued.body.runId);
      expect(refused.body.status).toBe("error");
      expect(refused.body.error).toMatchObject({ code: "thread_interrupted" });
      const pending = await store.store.getPendingInterrupts("b-paused" as ThreadId, 10);
      expect(pending.total).toBe(1);
      expect((await store.store.getRun(first.body.runId as RunId))?.status).toBe("interrupted");
    });
  });
}
