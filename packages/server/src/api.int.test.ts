/**
 * Every route over real HTTP, on SQLite and on Postgres: threads, runs (wait, background,
 * streamed, joined), the approval queue and its live feed, targeted resume of parallel sub-agents,
 * typed answers, stale targets, idempotent answers, steering, audit, and graceful shutdown.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { Interrupt, ThreadId } from "@rein/core";
import {
  TOKENS,
  client,
  postgresBackend,
  readSse,
  serveOn,
  snapshotStore,
  sqliteBackend,
  type Backend,
} from "./testing/harness.ts";

type Json = Record<string, unknown>;
type Result = {
  runId: string;
  status: string;
  values: Json;
  interrupts: Interrupt[];
  checkpointId: string;
};

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`HTTP API on ${backend.name}`, () => {
    const served = serveOn(backend);
    let alice: ReturnType<typeof client>;
    let admin: ReturnType<typeof client>;

    beforeEach(() => {
      alice = client(served.url, TOKENS["alice"]!.token);
      admin = client(served.url, TOKENS["admin"]!.token);
    });

    async function pausedDesk(threadId = "t-desk"): Promise<Result> {
      expect((await alice("POST", "/threads", { graph: "desk", threadId })).status).toBe(201);
      const run = await alice<Result>("POST", `/threads/${threadId}/runs`, {
        input: {},
        wait: true,
      });
      expect(run.status).toBe(200);
      expect(run.body.status).toBe("interrupted");
      return run.body;
    }

    it("serves /healthz and an OpenAPI document listing every route, without a token", async () => {
      const anonymous = client(served.url, null);
      const health = await anonymous("GET", "/healthz");
      expect(health.body).toEqual({
        ok: true,
        store: "custom",
        graphs: ["desk", "slow", "ask", "ledger", "approve-then-charge"],
        auth: "token",
      });
      const ready = await anonymous("GET", "/readyz");
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ ready: true, reason: null });
      const doc = await anonymous<{ openapi: string; paths: Record<string, Json> }>(
        "GET",
        "/openapi.json",
      );
      expect(doc.body.openapi).toBe("3.1.0");
      expect(Object.keys(doc.body.paths).sort()).toEqual(
        [
          "/api-keys",
          "/api-keys/{id}",
          "/audit",
          "/audit/export",
          "/audit/verify",
          "/auth/config",
          "/healthz",
          "/interrupts",
          "/interrupts/decisions",
          "/interrupts/stream",
          "/interrupts/{id}/links",
          "/metrics",
          "/openapi.json",
          "/readyz",
          "/threads",
          "/threads/{id}",
          "/threads/{id}/history",
          "/threads/{id}/resume",
          "/threads/{id}/runs",
          "/threads/{id}/runs/stream",
          "/threads/{id}/runs/{runId}",
          "/threads/{id}/runs/{runId}/stream",
          "/threads/{id}/state",
          "/threads/{id}/steer",
          "/webhooks",
          "/webhooks/{id}",
          "/webhooks/{id}/deliveries",
          "/webhooks/{id}/rotate",
          "/whoami",
        ].sort(),
      );
      const resume = doc.body.paths["/threads/{id}/resume"] as { post: { requestBody: Json } };
      expect(JSON.stringify(resume.post.requestBody)).toContain("resumeMap");
    });

    it("creates a thread in the token's tenant and shows its status and pending interrupts", async () => {
      const created = await alice("POST", "/threads", {
        graph: "desk",
        threadId: "t1",
        metadata: { customer: 7 },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        threadId: "t1",
        graph: "desk",
        tenant: "acme",
        status: "idle",
        metadata: { customer: 7 },
      });
      const thread = await served.store.getThread("t1" as ThreadId);
      expect(thread?.tenant).toBe("acme");
      await alice("POST", "/threads/t1/runs", { input: {}, wait: true });
      const got = await alice<{ status: string; pendingInterrupts: Interrupt[] }>(
        "GET",
        "/threads/t1",
      );
      expect(got.body.status).toBe("interrupted");
      expect(got.body.pendingInterrupts.map((i) => i.namespace[0]).sort()).toEqual([
        "email_agent",
        "refund_agent",
      ]);
      const list = await alice<{ items: Json[] }>("GET", "/threads");
      expect(list.body.items.map((t) => t["threadId"])).toEqual(["t1"]);
      const generated = await alice("POST", "/threads", { graph: "slow" });
      expect(generated.body["threadId"]).toMatch(/^[0-9a-f-]{36}$/);
    });

    it("keeps a thread's graph in its graph column, out of the metadata it shows", async () => {
      await alice("POST", "/threads", { graph: "desk", threadId: "tg", metadata: { customer: 7 } });
      const stored = await served.store.getThread("tg" as ThreadId);
      expect([stored?.graph, stored?.metadata]).toEqual(["desk", { customer: 7 }]);
      const shown = await alice<{ graph: string; metadata: Json }>("GET", "/threads/tg");
      expect([shown.body.graph, shown.body.metadata]).toEqual(["desk", { customer: 7 }]);
    });

    it("resolves an interrupt at its deadline with the server's timer, and shows it in the queue", async () => {
      await alice("POST", "/threads", { graph: "ask", threadId: "t-deadline" });
      await alice("POST", "/threads/t-deadline/runs", { input: { timeoutMs: 300 }, wait: true });
      const queued = await alice<{ items: { deadline: string | null }[] }>(
        "GET",
        "/interrupts?threadId=t-deadline",
      );
      expect(typeof queued.body.items[0]?.deadline).toBe("string");
      await expect
        .poll(
          async () => (await alice<{ status: string }>("GET", "/threads/t-deadline")).body.status,
          {
            timeout: 6_000,
            interval: 100,
          },
        )
        .toBe("done");
      const state = await alice<{ values: Json }>("GET", "/threads/t-deadline/state");
      expect(state.body.values["answer"]).toBe("timed out");
      const audit = await alice<{ items: Json[] }>("GET", "/audit?threadId=t-deadline");
      expect(audit.body.items.map((a) => [a["action"], a["actor"]])).toEqual([
        ["timeout", "system:timer"],
      ]);
    });

    it("reads an idle thread's state and history before any run", async () => {
      await alice("POST", "/threads", { graph: "ask", threadId: "t-idle" });
      const state = await alice<{ values: Json; checkpointId: string | null }>(
        "GET",
        "/threads/t-idle/state",
      );
      expect(state.status).toBe(200);
      expect(state.body.checkpointId).toBeNull();
      const history = await alice<{ items: unknown[] }>("GET", "/threads/t-idle/history");
      expect(history.body.items).toEqual([]);
      const steer = await alice("POST", "/threads/t-idle/steer", { text: "hello" });
      expect(steer.status).toBe(404);
    });

    it("refuses an unknown graph (400) and a taken thread id, storing nothing", async () => {
      await alice("POST", "/threads", { graph: "desk", threadId: "t1" });
      const before = await snapshotStore(served.store);
      const unknown = await alice("POST", "/threads", { graph: "nope" });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({
        error: "invalid_input",
        details: { graphs: ["desk", "slow", "ask", "ledger", "approve-then-charge"] },
      });
      expect((await alice("POST", "/threads", { graph: "slow", threadId: "t1" })).status).toBe(400);
      expect(await snapshotStore(served.store)).toBe(before);
    });

    it("lists parallel sub-agent interrupts in the queue with path, sub-agent id, decision payload and answer schema", async () => {
      await pausedDesk();
      const page = await alice<{ items: Json[]; nextCursor: string | null }>(
        "GET",
        "/interrupts?status=pending&threadId=t-desk",
      );
      expect(page.status).toBe(200);
      expect(page.body.items).toHaveLength(2);
      const refund = page.body.items.find(
        (i) => (i["namespace"] as string[])[0] === "refund_agent",
      ) as Json;
      expect(refund).toMatchObject({
        threadId: "t-desk",
        node: "approve",
        status: "pending",
        graph: "refund_agent",
        deadline: null,
        payload: {
          action: "refund",
          args: { ticket: "T-1", amount: 50 },
          allow: { accept: true, edit: true, respond: true, ignore: true },
        },
      });
      expect(refund["subAgentId"]).toBe(`refund_agent:${refund["runId"] as string}`);
      expect((refund["path"] as Json[]).map((p) => p["graph"])).toEqual(["desk", "refund_agent"]);
      expect(JSON.stringify(refund["answerSchema"])).toContain("accept");
      expect(typeof refund["checkpointId"]).toBe("string");
      // The app (the root graph) lists every question of its tree; a sub-agent graph only its own.
      const byApp = await alice<{ items: Json[]; total: number }>("GET", "/interrupts?graph=desk");
      expect(byApp.body.items.map((i) => i["graph"]).sort()).toEqual([
        "email_agent",
        "refund_agent",
      ]);
      expect(byApp.body.total).toBe(2);
      const bySubAgent = await alice<{ items: Json[]; total: number }>(
        "GET",
        "/interrupts?subAgentGraph=email_agent",
      );
      expect(bySubAgent.body.items.map((i) => i["graph"])).toEqual(["email_agent"]);
      expect(bySubAgent.body.total).toBe(1);
      expect(
        (await alice<{ items: Json[] }>("GET", "/interrupts?graph=email_agent")).body.items,
      ).toEqual([]);
      const first = await alice<{ items: Json[]; nextCursor: string }>(
        "GET",
        "/interrupts?limit=1",
      );
      const second = await alice<{ items: Json[] }>(
        "GET",
        `/interrupts?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      );
      expect(second.body.items[0]?.["id"]).not.toBe(first.body.items[0]?.["id"]);
    });

    it("resumes one sub-agent by target; its paused sibling stays pending with the same id", async () => {
      const paused = await pausedDesk();
      const refund = paused.interrupts.find((i) => i.namespace[0] === "refund_agent")!;
      const email = paused.interrupts.find((i) => i.namespace[0] === "email_agent")!;
      const r = await alice<Result>("POST", "/threads/t-desk/resume", {
        target: { runId: refund.runId, namespace: refund.namespace },
        resume: { type: "accept" },
        steering: "refund half only next time",
      });
      expect(r.status).toBe(200);
      expect(r.body.status).toBe("interrupted");
      expect(r.body.interrupts.map((i) => i.id)).toEqual([email.id]);
      const done = await alice<Result>("POST", "/threads/t-desk/resume", {
        resumeMap: { [email.id]: { type: "edit", args: { amount: 20 } } },
      });
      expect(done.body.status).toBe("done");
      expect(done.body.values["log"]).toEqual([
        "plan T-1",
        'refund_agent: refund {"ticket":"T-1","amount":50} [steered: refund half only next time]',
        'email_agent: email {"amount":20}',
        "report (3 lines)",
      ]);
      const audit = await alice<{ items: Json[] }>("GET", "/audit?threadId=t-desk");
      expect(audit.body.items.map((a) => [a["action"], a["actor"]])).toEqual([
        ["answer", "alice@acme"],
        ["steer", "alice@acme"],
        ["answer", "alice@acme"],
      ]);
    });

    it("refuses an answer its schema rejects with 422 and stores nothing", async () => {
      const paused = await pausedDesk();
      const refund = paused.interrupts.find((i) => i.namespace[0] === "refund_agent")!;
      const before = await snapshotStore(served.store);
      const r = await alice("POST", "/threads/t-desk/resume", {
        target: { runId: refund.runId, namespace: refund.namespace },
        resume: { type: "refund-everything" },
      });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({
        error: "invalid_answer",
        details: { interruptId: refund.id },
      });
      expect(await snapshotStore(served.store)).toBe(before);
    });

    it("answers a stale target with 409 and the latest metadata", async () => {
      const paused = await pausedDesk();
      const refund = paused.interrupts.find((i) => i.namespace[0] === "refund_agent")!;
      const email = paused.interrupts.find((i) => i.namespace[0] === "email_agent")!;
      const target = { runId: refund.runId, namespace: refund.namespace, interruptId: refund.id };
      expect(
        (await alice("POST", "/threads/t-desk/resume", { target, resume: { type: "accept" } }))
          .status,
      ).toBe(200);
      const again = await alice<{ error: string; details: Json }>(
        "POST",
        "/threads/t-desk/resume",
        { target, resume: { type: "ignore" } },
      );
      expect(again.status).toBe(409);
      expect(again.body.error).toBe("stale_target");
      expect(again.body.details).toMatchObject({
        threadId: "t-desk",
        runId: refund.runId,
        runStatus: "done",
      });
      expect((again.body.details["pendingInterrupts"] as Interrupt[]).map((i) => i.id)).toEqual([
        email.id,
      ]);
      const head = await alice<{ headCheckpointId: string }>("GET", "/threads/t-desk");
      const expected = await alice<{ details: Json }>("POST", "/threads/t-desk/resume", {
        resume: { type: "accept" },
        expectedCheckpointId: "000000000000-000000-000000",
      });
      expect(expected.status).toBe(409);
      expect(expected.body.details["headCheckpointId"]).toBe(head.body.headCheckpointId);
    });

    it("refuses a thread-level resume with two pending interrupts as ambiguous (409), listing them", async () => {
      await pausedDesk();
      const r = await alice<{ error: string; details: { pending: unknown[] } }>(
        "POST",
        "/threads/t-desk/resume",
        { resume: { type: "accept" } },
      );
      expect(r.status).toBe(409);
      expect(r.body.error).toBe("ambiguous_resume");
      expect(r.body.details.pending).toHaveLength(2);
    });

    it("applies an answer once per Idempotency-Key and returns the first outcome to a repeat", async () => {
      const paused = await pausedDesk();
      const refund = paused.interrupts.find((i) => i.namespace[0] === "refund_agent")!;
      const body = {
        target: { runId: refund.runId, namespace: refund.namespace },
        resume: { type: "accept" },
      };
      const headers = { "idempotency-key": "answer-refund-1" };
      const first = await alice<Result>("POST", "/threads/t-desk/resume", body, headers);
      const second = await alice<Result>("POST", "/threads/t-desk/resume", body, headers);
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.body).toEqual(first.body);
      const audit = await alice<{ items: Json[] }>("GET", "/audit?threadId=t-desk");
      expect(audit.body.items.filter((a) => a["action"] === "answer")).toHaveLength(1);
      const other = await alice("POST", "/threads/t-desk/resume", body, {
        "idempotency-key": "answer-refund-2",
      });
      expect(other.status).toBe(409);
    });

    it("starts one run per Idempotency-Key: a repeat of the input returns the first run's outcome", async () => {
      expect((await alice("POST", "/threads", { graph: "desk", threadId: "t-key" })).status).toBe(
        201,
      );
      const body = { input: {}, wait: true };
      const headers = { "idempotency-key": "start-ticket-1" };
      const first = await alice<Result>("POST", "/threads/t-key/runs", body, headers);
      const second = await alice<Result>("POST", "/threads/t-key/runs", body, headers);
      expect(first.status).toBe(200);
      expect(first.body.status).toBe("interrupted");
      expect(second.status).toBe(200);
      expect(second.body).toEqual(first.body);
      const runs = await alice<{ items: Json[] }>("GET", "/threads/t-key/runs");
      const roots = runs.body.items.filter((r) => r["parentRunId"] === null);
      expect(roots.map((r) => r["runId"])).toEqual([first.body.runId]);
      // Without the key, the same input is what it always was: refused beside a paused run.
      const plain = await alice("POST", "/threads/t-key/runs", body);
      expect(plain.status).toBe(409);
    });

    it("steers without resuming; the next execution in scope reads it", async () => {
      const paused = await pausedDesk();
      const email = paused.interrupts.find((i) => i.namespace[0] === "email_agent")!;
      const steer = await alice<Json>("POST", "/threads/t-desk/steer", {
        target: { runId: email.runId, namespace: email.namespace },
        text: "mention the coupon",
      });
      expect(steer.status).toBe(201);
      expect(steer.body).toMatchObject({
        text: "mention the coupon",
        actor: "alice@acme",
        runId: email.runId,
      });
      const refund = paused.interrupts.find((i) => i.namespace[0] === "refund_agent")!;
      const r = await alice<Result>("POST", "/threads/t-desk/resume", {
        resumeMap: { [email.id]: { type: "accept" }, [refund.id]: { type: "accept" } },
      });
      expect(r.body.status).toBe("done");
      expect(r.body.values["log"]).toContain(
        'email_agent: email {"ticket":"T-1","amount":50} [steered: mention the coupon]',
      );
    });

    it("starts a background run (202), shows its run tree, and lists runs", async () => {
      await alice("POST", "/threads", { graph: "desk", threadId: "t-bg" });
      const accepted = await alice<{ runId: string; status: string }>(
        "POST",
        "/threads/t-bg/runs",
        { input: { ticket: "T-9" } },
      );
      expect(accepted.status).toBe(202);
      expect(accepted.body.status).toBe("queued");
      await expect
        .poll(async () => (await alice<{ status: string }>("GET", "/threads/t-bg")).body.status, {
          timeout: 2_000,
          interval: 20,
        })
        .toBe("interrupted");
      const tree = await alice<{
        runId: string;
        status: string;
        children: { graph: string; status: string; children: unknown[] }[];
      }>("GET", `/threads/t-bg/runs/${accepted.body.runId}`);
      expect(tree.body.runId).toBe(accepted.body.runId);
      expect(tree.body.children.map((c) => [c.graph, c.status]).sort()).toEqual([
        ["email_agent", "interrupted"],
        ["refund_agent", "interrupted"],
      ]);
      const runs = await alice<{ items: Json[] }>("GET", "/threads/t-bg/runs");
      expect(runs.body.items).toHaveLength(3);
      expect((await alice("GET", "/threads/t-bg/runs/not-a-run")).status).toBe(404);
    });

    it("streams a run over SSE with its custom events and end; a join with Last-Event-ID resumes after it", async () => {
      await alice("POST", "/threads", { graph: "slow", threadId: "t-s" });
      const response = await fetch(`${served.url}/threads/t-s/runs/stream`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${TOKENS["alice"]!.token}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ input: { steps: 3, ms: 30 }, streamMode: ["custom"] }),
      });
      expect(response.headers.get("content-type")).toContain("text/event-stream");
      const events = await readSse(response);
      expect(events.map((e) => e.event)).toEqual(["run", "custom", "custom", "custom", "end"]);
      const runId = (events[0]?.data as { runId: string }).runId;
      expect((events[4]?.data as { result: Result }).result.status).toBe("done");
      const joined = await fetch(
        `${served.url}/threads/t-s/runs/${runId}/stream?streamMode=custom`,
        {
          headers: {
            authorization: `Bearer ${TOKENS["alice"]!.token}`,
            "last-event-id": events[2]!.id!,
          },
        },
      );
      const rest = await readSse(joined);
      expect(rest.map((e) => [e.event, e.id])).toEqual([
        ["custom", events[3]!.id],
        ["end", events[4]!.id],
      ]);
    });

    it("joins a background run while it runs and sees its live events", async () => {
      await alice("POST", "/threads", { graph: "slow", threadId: "t-j" });
      const accepted = await alice<{ runId: string }>("POST", "/threads/t-j/runs", {
        input: { steps: 5, ms: 40 },
      });
      const joined = await fetch(
        `${served.url}/threads/t-j/runs/${accepted.body.runId}/stream?streamMode=custom`,
        {
          headers: { authorization: `Bearer ${TOKENS["alice"]!.token}` },
        },
      );
      const events = await readSse(joined);
      expect(events.filter((e) => e.event === "custom")).toHaveLength(5);
      expect(events.at(-1)?.event).toBe("end");
    });

    it("refuses new input while a run holds the thread (409 with the latest metadata)", async () => {
      await alice("POST", "/threads", { graph: "slow", threadId: "t-busy" });
      await alice("POST", "/threads/t-busy/runs", { input: { steps: 4, ms: 100 } });
      const busy = await alice<{ error: string; details: Json }>("POST", "/threads/t-busy/runs", {
        input: { steps: 1 },
      });
      expect(busy.status).toBe(409);
      expect(busy.body.error).toBe("thread_busy");
      // The first run is running, or still queued when the machine is slow to start it.
      expect(["queued", "running"]).toContain(
        (busy.body.details["latest"] as { runStatus: string }).runStatus,
      );
      expect(busy.headers.get("retry-after")).toBe("1");
    });

    it("refuses plain input to a thread waiting on answers (409 thread_interrupted)", async () => {
      await pausedDesk();
      const before = await snapshotStore(served.store);
      const r = await alice<{ error: string }>("POST", "/threads/t-desk/runs", {
        input: { ticket: "T-2" },
        wait: true,
      });
      expect(r.status).toBe(409);
      expect(r.body.error).toBe("thread_interrupted");
      expect(await snapshotStore(served.store)).toBe(before);
    });

    it("answers through POST /runs with a command, and honours per-run interruptBefore", async () => {
      await alice("POST", "/threads", { graph: "ask", threadId: "t-ask" });
      const paused = await alice<Result>("POST", "/threads/t-ask/runs", {
        input: {},
        wait: true,
        interruptBefore: ["ask"],
      });
      expect(paused.body.interrupts[0]).toMatchObject({ kind: "before", node: "ask" });
      const passed = await alice<Result>("POST", "/threads/t-ask/runs", {
        command: { resume: null },
        wait: true,
      });
      expect(passed.body.interrupts[0]).toMatchObject({
        kind: "dynamic",
        payload: { question: "Proceed?" },
      });
      const done = await alice<Result>("POST", "/threads/t-ask/runs", {
        command: { resume: { text: "yes" } },
        wait: true,
      });
      expect(done.body).toMatchObject({ status: "done", values: { answer: "yes" } });
    });

    it("reads state (with subgraphs) and history, newest first, paging with before", async () => {
      await pausedDesk();
      const state = await alice<{ values: Json; tasks: { node: string }[]; children?: unknown[] }>(
        "GET",
        "/threads/t-desk/state?subgraphs=true",
      );
      expect(state.body.values).toMatchObject({ ticket: "T-1", log: ["plan T-1"] });
      expect(state.body.tasks.map((t) => t.node).sort()).toEqual(["email_agent", "refund_agent"]);
      const history = await alice<{ items: { checkpointId: string; step: number }[] }>(
        "GET",
        "/threads/t-desk/history?limit=2",
      );
      expect(history.body.items).toHaveLength(2);
      expect(history.body.items[0]!.step).toBeGreaterThan(history.body.items[1]!.step);
      const older = await alice<{ items: { step: number }[] }>(
        "GET",
        `/threads/t-desk/history?before=${history.body.items[1]!.checkpointId}`,
      );
      expect(older.body.items.every((c) => c.step < history.body.items[1]!.step)).toBe(true);
    });

    it("deletes a thread with the admin scope only", async () => {
      await pausedDesk();
      expect((await alice("DELETE", "/threads/t-desk")).status).toBe(403);
      expect((await admin("DELETE", "/threads/t-desk")).status).toBe(204);
      expect((await alice("GET", "/threads/t-desk")).status).toBe(404);
      expect((await alice<{ items: unknown[] }>("GET", "/interrupts")).body.items).toEqual([]);
    });

    it("feeds the approval queue live over SSE: a first page, then the page after an answer", async () => {
      const paused = await pausedDesk();
      const refund = paused.interrupts.find((i) => i.namespace[0] === "refund_agent")!;
      const response = await fetch(`${served.url}/interrupts/stream`, {
        headers: { authorization: `Bearer ${TOKENS["alice"]!.token}` },
      });
      const seen: number[] = [];
      const events = readSse(response, (e) => {
        seen.push((e.data as { items: unknown[] }).items.length);
        if (seen.length === 1)
          void alice("POST", "/threads/t-desk/resume", {
            target: { runId: refund.runId, namespace: refund.namespace },
            resume: { type: "accept" },
          });
        return seen.length === 2;
      });
      await events;
      expect(seen).toEqual([2, 1]);
    });

    it("refuses a body over the limit with 413", async () => {
      await alice("POST", "/threads", { graph: "slow", threadId: "t-big" });
      const before = await snapshotStore(served.store);
      const r = await alice("POST", "/threads/t-big/runs", {
        input: { blob: "x".repeat(2 * 1024 * 1024) },
      });
      expect(r.status).toBe(413);
      expect(r.body).toMatchObject({ error: "payload_too_large" });
      expect(await snapshotStore(served.store)).toBe(before);
    });

    it("drains a running background run on shutdown before closing", async () => {
      await alice("POST", "/threads", { graph: "slow", threadId: "t-drain" });
      const accepted = await alice<{ runId: string }>("POST", "/threads/t-drain/runs", {
        input: { steps: 3, ms: 100 },
      });
      await served.server.close();
      const run = await served.store.getRun(accepted.body.runId as never);
      expect(run?.status).toBe("done");
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
