/**
 * The SDK's core routes against Rein's protocol layer with LangGraph's client, over real HTTP on
 * SQLite and Postgres: state at a checkpoint, state writes, thread metadata and deletion,
 * stateless runs, cancellation, the enqueue policy, assistant schemas, and bad input answered
 * 4xx (never 500) with nothing changed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@langchain/langgraph-sdk";
import {
  TOKENS,
  postgresBackend,
  snapshotStore,
  sqliteBackend,
  startTestServer,
  type Backend,
  type TestServer,
  type TestStore,
} from "../testing/harness.ts";
import { graphs } from "../testing/graphs.ts";
import { langGraphGraphs } from "../testing/langgraph-graphs.ts";

/** The HTTP status of a refused SDK call. */
async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
  } catch (error) {
    return (error as { status: number }).status;
  }
  throw new Error("The call was not refused.");
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`LangGraph SDK core routes on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;
    let alice: Client;
    let admin: Client;

    beforeAll(async () => {
      store = await backend.create();
      server = await startTestServer(store.store, { graphs: { ...graphs, ...langGraphGraphs } });
      const make = (token: string) =>
        new Client({
          apiUrl: `${server.url}/langgraph`,
          apiKey: token,
          callerOptions: { maxRetries: 0 },
        });
      alice = make(TOKENS["alice"]!.token);
      admin = make(TOKENS["admin"]!.token);
    });
    afterAll(async () => {
      await server?.close();
      await store?.destroy();
    });

    it("reads state at a checkpoint, writes state, patches metadata and deletes the thread", async () => {
      const thread = await alice.threads.create({ metadata: { owner: "dana" } });
      await alice.runs.wait(thread.thread_id, "slow", { input: { steps: 1, ms: 1 } });
      const head = await alice.threads.getState(thread.thread_id);
      expect(head.values).toMatchObject({ steps: 1, done: 1 });
      const past = head.parent_checkpoint!.checkpoint_id!;
      const before = await alice.threads.getState(thread.thread_id, past);
      expect(before.checkpoint.checkpoint_id).toBe(past);
      const same = await alice.threads.getState(thread.thread_id, head.parent_checkpoint!);
      expect(same.checkpoint.checkpoint_id).toBe(past);
      const written = await alice.threads.updateState(thread.thread_id, {
        values: { done: 7 },
        asNode: "tick",
      });
      expect((await alice.threads.getState(thread.thread_id)).values).toMatchObject({ done: 7 });
      expect(written.configurable?.["checkpoint_id"]).toBe(
        (await alice.threads.getState(thread.thread_id)).checkpoint.checkpoint_id,
      );
      const patched = await alice.threads.update(thread.thread_id, { metadata: { team: "ops" } });
      expect(patched.metadata).toMatchObject({ owner: "dana", team: "ops", graph_id: "slow" });
      expect(await alice.threads.count({ metadata: { team: "ops" } })).toBe(1);
      expect(await statusOf(alice.threads.delete(thread.thread_id))).toBe(403);
      await admin.threads.delete(thread.thread_id);
      expect(await statusOf(alice.threads.get(thread.thread_id))).toBe(404);
      expect(await statusOf(alice.threads.copy(thread.thread_id))).toBe(404);
    });

    it("runs stateless runs on a thread of their own, dropped afterwards", async () => {
      const before = (await alice.threads.search({ limit: 1000 })).length;
      const result = (await alice.runs.wait(null, "slow", { input: { steps: 2, ms: 1 } })) as {
        done: number;
      };
      expect(result.done).toBe(2);
      const parts = [];
      for await (const part of alice.runs.stream(null, "slow", {
        input: { steps: 1, ms: 1 },
        streamMode: "custom",
      }))
        parts.push(part);
      expect(parts[0]?.event).toBe("metadata");
      expect(parts.filter((p) => p.event === "custom")).toHaveLength(1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await alice.threads.search({ limit: 1000 })).length).toBe(before);
    });

    it("cancels a running run, and queues a run behind a busy thread with enqueue", async () => {
      const thread = await alice.threads.create({ graphId: "slow" });
      const first = await alice.runs.create(thread.thread_id, "slow", {
        input: { steps: 50, ms: 20 },
      });
      expect(
        await statusOf(alice.runs.create(thread.thread_id, "slow", { input: { steps: 1 } })),
      ).toBe(409);
      const queued = await alice.runs.create(thread.thread_id, "slow", {
        input: { steps: 1, ms: 1 },
        multitaskStrategy: "enqueue",
      });
      expect(queued.status).toBe("pending");
      expect((await alice.threads.get(thread.thread_id)).status).toBe("busy");
      await alice.runs.cancel(thread.thread_id, first.run_id, true);
      const cancelled = await alice.runs.get(thread.thread_id, first.run_id);
      expect(cancelled).toMatchObject({ status: "interrupted", cancel_reason: "cancelled" });
      await alice.runs.join(thread.thread_id, queued.run_id);
      expect((await alice.runs.get(thread.thread_id, queued.run_id)).status).toBe("success");
      const listed = await alice.runs.list(thread.thread_id, { status: "interrupted" });
      expect(listed.map((r) => r.run_id)).toEqual([first.run_id]);
    });

    it("describes assistants: schemas and subgraphs", async () => {
      const schemas = await alice.assistants.getSchemas("ask");
      expect(Object.keys(schemas.state_schema?.properties ?? {})).toEqual([
        "question",
        "timeoutMs",
        "answer",
      ]);
      expect(await alice.assistants.getSubgraphs("ask")).toEqual({});
      expect(await statusOf(alice.assistants.get("missing"))).toBe(404);
      expect(await statusOf(alice.assistants.create({ graphId: "ask" }))).toBe(501);
    });

    it("copies a thread at rest: its state under a new id, one checkpoint, a life of its own", async () => {
      const thread = await alice.threads.create({ metadata: { owner: "dana" } });
      await alice.runs.wait(thread.thread_id, "slow", { input: { steps: 2, ms: 1 } });
      const source = await alice.threads.getState(thread.thread_id);
      const copy = await alice.threads.copy(thread.thread_id);
      expect(copy.thread_id).not.toBe(thread.thread_id);
      expect(copy.metadata).toMatchObject({ owner: "dana", graph_id: "slow" });
      const copied = await alice.threads.getState(copy.thread_id);
      expect(copied.values).toEqual(source.values);
      expect(copied.next).toEqual(source.next);
      expect(await alice.threads.getHistory(copy.thread_id)).toHaveLength(1);
      expect((await alice.threads.get(copy.thread_id)).status).toBe("idle");

      // The copy runs on its own; the source's head does not move.
      const ran = await alice.runs.wait(copy.thread_id, "slow", { input: { steps: 3, ms: 1 } });
      expect(ran).toMatchObject({ steps: 3, done: 3 });
      const after = await alice.threads.getState(thread.thread_id);
      expect(after.checkpoint.checkpoint_id).toBe(source.checkpoint.checkpoint_id);
      expect(after.values).toEqual(source.values);
      // A thread not run yet copies as a bare thread.
      const bare = await alice.threads.copy((await alice.threads.create()).thread_id);
      expect(await alice.threads.getHistory(bare.thread_id)).toEqual([]);

      // A thread waiting on an answer is refused (409 thread_interrupted) and nothing is written.
      const paused = await alice.threads.create();
      await alice.runs.wait(paused.thread_id, "ask", { input: {} });
      const before = await snapshotStore(server.store);
      const refused = await fetch(`${server.url}/langgraph/threads/${paused.thread_id}/copy`, {
        method: "POST",
        headers: { "x-api-key": TOKENS["alice"]!.token },
      });
      expect(refused.status).toBe(409);
      expect(await refused.json()).toMatchObject({ error: "thread_interrupted" });
      expect(await snapshotStore(server.store)).toBe(before);
    });

    it("runs a thread again from a past checkpoint (checkpoint_id), keeping the first branch", async () => {
      const thread = await alice.threads.create();
      await alice.runs.wait(thread.thread_id, "slow", { input: { steps: 1, ms: 1 } });
      const first = await alice.threads.getState(thread.thread_id);
      expect(first.values).toMatchObject({ steps: 1, done: 1 });
      const history = await alice.threads.getHistory(thread.thread_id, { limit: 20 });
      const beforeTick = history.find((s) => s.next.includes("tick"))!;
      expect(beforeTick.values).toMatchObject({ steps: 1, done: 0 });

      const forked = await alice.runs.wait(thread.thread_id, "slow", {
        input: { steps: 2 },
        checkpointId: beforeTick.checkpoint.checkpoint_id!,
      });
      expect(forked).toMatchObject({ steps: 2, done: 2 });
      const head = await alice.threads.getState(thread.thread_id);
      expect(head.values).toMatchObject({ steps: 2, done: 2 });
      // The new head's ancestry runs through the fork point, not through the first head, which the
      // thread still holds as it was.
      const ancestry: string[] = [];
      for (let at = head; at.parent_checkpoint?.checkpoint_id;) {
        ancestry.push(at.parent_checkpoint.checkpoint_id);
        at = await alice.threads.getState(thread.thread_id, at.parent_checkpoint.checkpoint_id);
      }
      expect(ancestry).toContain(beforeTick.checkpoint.checkpoint_id);
      expect(ancestry).not.toContain(first.checkpoint.checkpoint_id);
      const kept = await alice.threads.getState(thread.thread_id, first.checkpoint.checkpoint_id!);
      expect(kept.values).toMatchObject({ steps: 1, done: 1 });

      // With a question pending, a fork is refused (it would strand the question) and writes nothing.
      const paused = await alice.threads.create();
      await alice.runs.wait(paused.thread_id, "ask", { input: {} });
      const asked = await alice.threads.getHistory(paused.thread_id, { limit: 20 });
      const before = await snapshotStore(server.store);
      const refused = await fetch(`${server.url}/langgraph/threads/${paused.thread_id}/runs/wait`, {
        method: "POST",
        headers: { "x-api-key": TOKENS["alice"]!.token, "content-type": "application/json" },
        body: JSON.stringify({
          assistant_id: "ask",
          input: {},
          checkpoint_id: asked.at(-1)!.checkpoint.checkpoint_id,
        }),
      });
      expect(refused.status).toBe(409);
      expect(await refused.json()).toMatchObject({ error: "thread_interrupted" });
      expect(await snapshotStore(server.store)).toBe(before);
    });

    it("answers bad input 4xx in JSON, never 500, and changes nothing", async () => {
      const thread = await alice.threads.create({ graphId: "ask" });
      const before = await snapshotStore(server.store);
      const headers = { "x-api-key": TOKENS["alice"]!.token, "content-type": "application/json" };
      const base = `${server.url}/langgraph`;
      const cases: [string, string, string | undefined][] = [
        ["POST", `/threads/${thread.thread_id}/runs/wait`, "{not json"],
        ["POST", `/threads/${thread.thread_id}/runs/wait`, JSON.stringify({ input: {} })],
        [
          "POST",
          `/threads/${thread.thread_id}/runs/wait`,
          JSON.stringify({ assistant_id: "ask", input: { nope: 1 } }),
        ],
        [
          "POST",
          `/threads/${thread.thread_id}/runs/wait`,
          JSON.stringify({ assistant_id: "ask", command: { resume: 1 }, input: {} }),
        ],
        [
          "POST",
          `/threads/${thread.thread_id}/runs/wait`,
          JSON.stringify({ assistant_id: "slow", input: {} }),
        ],
        ["POST", "/threads/search", JSON.stringify({ limit: -1 })],
        ["POST", "/threads", JSON.stringify({ thread_id: thread.thread_id })],
        ["GET", "/threads/bad%20id", undefined],
        ["GET", `/threads/${thread.thread_id}/runs?limit=abc`, undefined],
        ["POST", `/threads/${thread.thread_id}/history`, JSON.stringify({ limit: "ten" })],
      ];
      for (const [method, path, body] of cases) {
        const response = await fetch(base + path, {
          method,
          headers,
          ...(body !== undefined ? { body } : {}),
        });
        const json = (await response.json()) as { error: string; detail: string };
        expect(response.status, `${method} ${path} ${body}`).toBeGreaterThanOrEqual(400);
        expect(response.status, `${method} ${path} ${body}`).toBeLessThan(500);
        expect(json.detail).toEqual(expect.any(String));
        expect(json.error).toEqual(expect.any(String));
      }
      const atPast = async (body: Record<string, unknown>) =>
        fetch(`${base}/threads/${thread.thread_id}/runs/wait`, {
          method: "POST",
          headers,
          body: JSON.stringify({ assistant_id: "ask", ...body }),
        });
      // A checkpoint the thread does not have is 404; resuming at a past checkpoint is not served.
      expect((await atPast({ checkpoint_id: "x" })).status).toBe(404);
      expect((await atPast({ checkpoint: { checkpoint_id: "x" } })).status).toBe(404);
      expect((await atPast({ checkpoint_id: "x", command: { resume: 1 } })).status).toBe(501);
      expect(await snapshotStore(server.store)).toBe(before);
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
