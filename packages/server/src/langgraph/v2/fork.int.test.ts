/**
 * `state.fork` and `run.start`'s `forkFrom` (time travel) on `rein serve`'s v2 protocol, through
 * the real `@langchain/langgraph-sdk` 1.15 `client.threads.stream()`: a run from a past
 * checkpoint of the thread is a new run (Rein's fork) that streams to the thread's subscribers,
 * leaves the earlier branch in the history, and is refused for a checkpoint the thread does not
 * have or while the thread waits on answers, changing nothing.
 */
import { Client } from "@langchain/langgraph-sdk";
import { END, START, StateGraph, append, lastValue, type Checkpointer } from "@rein/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { graphs } from "../../testing/graphs.ts";
import { sendCommand, type Json } from "../../testing/v2-commands.ts";
import {
  TOKENS,
  readSse,
  snapshotStore,
  postgresBackend,
  sqliteBackend,
  type Backend,
  startTestServer,
  type TestServer,
  type TestStore,
} from "../../testing/harness.ts";

/** Executions of each node of `pipeline`, by name. */
const executions = new Map<string, number>();
const ran = (node: string): { log: string } => {
  executions.set(node, (executions.get(node) ?? 0) + 1);
  return { log: node };
};

/** Two steps in a row, each logging itself with the topic it read. */
function pipeline(store: Checkpointer) {
  return new StateGraph({ topic: lastValue<string>(() => ""), log: append<string>() })
    .addNode("first", (s) => ({ log: `${ran("first").log}:${s.topic}` }))
    .addNode("second", (s) => ({ log: `${ran("second").log}:${s.topic}` }))
    .addEdge(START, "first")
    .addEdge("first", "second")
    .addEdge("second", END)
    .compile({ checkpointer: store, name: "pipeline" });
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`LangGraph v2 state.fork on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;
    let base: string;
    let sdk: Client;

    beforeEach(async () => {
      executions.clear();
      store = await backend.create();
      server = await startTestServer(store.store, { graphs: { ...graphs, pipeline } });
      base = `${server.url}/langgraph`;
      sdk = new Client({ apiUrl: base, apiKey: TOKENS["alice"]!.token });
    });
    afterEach(async () => {
      await server.close();
      await store.destroy();
    });

    const command = (threadId: string, body: unknown) =>
      sendCommand(base, TOKENS["alice"]!.token, threadId, body);

    /** The thread's root values once its head is no longer `than` (a run ended after it). */
    async function settledAfter(threadId: string, than: string | undefined): Promise<Json> {
      const deadline = Date.now() + 10_000;
      for (;;) {
        // The run's status first, then the state: a state read before a run that completes in
        // between would be a step behind.
        const run = await command(threadId, { id: 51, method: "agent.getTree", params: {} });
        const status = (run.body["result"] as { tree: { status: string } }).tree.status;
        const state = await command(threadId, { id: 50, method: "state.get", params: {} });
        const checkpoint = (state.body["result"] as { checkpoint?: { id: string } }).checkpoint;
        if (checkpoint?.id !== than && status === "completed")
          return (state.body["result"] as { values: Json }).values;
        if (Date.now() > deadline) throw new Error("timed out waiting for the fork's run");
        await new Promise((r) => setTimeout(r, 20));
      }
    }

    it("runs from a past checkpoint as a new run: the next step again, or new input on that state", async () => {
      const thread = sdk.threads.stream("t-fork", { assistantId: "pipeline" });
      const original = await thread.run.start({ input: { topic: "a" } });
      expect(await thread.output).toEqual({ topic: "a", log: ["first:a", "second:a"] });
      const { checkpoints } = await thread.state.listCheckpoints({ limit: 10 });
      expect(checkpoints.map((c) => c.step)).toEqual([1, 0, -1]);
      const [head, afterFirst, input] = checkpoints;

      // No input: the checkpoint's next step (`second`) runs again, as a run of its own; `first`
      // does not.
      const replay = await thread.state.fork({ checkpoint_id: afterFirst!.id });
      expect(replay.thread_id).toBe("t-fork");
      expect(replay.run_id).not.toBe(original.run_id);
      expect(await settledAfter("t-fork", head!.id)).toEqual({
        topic: "a",
        log: ["first:a", "second:a"],
      });
      expect(Object.fromEntries(executions)).toEqual({ first: 1, second: 2 });
      const replayRun = await store.store.getRun(replay.run_id as never);
      expect(replayRun).toMatchObject({ status: "done", parentRunId: null });
      // The earlier branch stays in the thread's history, beside the fork's newer head.
      const afterReplay = await thread.state.listCheckpoints({ limit: 10 });
      const lineage = afterReplay.checkpoints.map((c) => c.id);
      expect(lineage).toEqual(expect.arrayContaining([head!.id, afterFirst!.id, input!.id]));
      expect(lineage.length).toBeGreaterThan(3);

      // With input: the input applied to that checkpoint's state, and the graph run on it. The
      // thread's subscribers get the fork's events.
      const before = afterReplay.checkpoints[0]!.id;
      const changed = await thread.state.fork({
        checkpoint_id: afterFirst!.id,
        input: { topic: "b" },
      });
      expect(await settledAfter("t-fork", before)).toEqual({
        topic: "b",
        log: ["first:a", "first:b", "second:b"],
      });
      const response = await fetch(`${base}/threads/t-fork/stream/events`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": TOKENS["alice"]!.token },
        body: JSON.stringify({ channels: ["values", "lifecycle"] }),
      });
      const events = (
        await readSse(response, (e) => {
          const p = (e.data as { params: { data: Json } }).params;
          return e.event === "lifecycle" && p.data["event"] === "completed";
        })
      ).map((e) => e.data as { method: string; params: { data: Json } });
      expect(events.filter((e) => e.method === "values").at(-1)?.params.data).toEqual({
        topic: "b",
        log: ["first:a", "first:b", "second:b"],
      });
      const tree = await thread.agent.getTree({ run_id: changed.run_id });
      expect(tree).toMatchObject({
        tree: { status: "completed", metadata: { run_id: changed.run_id } },
      });

      // The SDK's `forkFrom` (run.start's config.configurable.checkpoint_id): the same fork, and
      // a client's stream of the thread follows it to its output.
      await thread.close();
      const again = sdk.threads.stream("t-fork", { assistantId: "pipeline" });
      const fromInput = await again.run.start({ input: { topic: "c" }, forkFrom: input!.id });
      expect(fromInput.run_id).not.toBe(changed.run_id);
      expect(await again.output).toEqual({ topic: "c", log: ["first:c", "second:c"] });
      await again.close();
    });

    it("refuses a checkpoint the thread does not have, and a fork of a paused thread, changing nothing", async () => {
      const other = sdk.threads.stream("t-other", { assistantId: "pipeline" });
      await other.run.start({ input: { topic: "x" } });
      await other.output;
      const { checkpoints } = await other.state.listCheckpoints({ limit: 1 });
      const foreign = checkpoints[0]!.id;
      await other.close();

      const paused = sdk.threads.stream("t-paused", { assistantId: "ask" });
      await paused.run.start({ input: {} });
      await paused.output;
      const history = await paused.state.listCheckpoints({ limit: 10 });
      const past = history.checkpoints.at(-1)!.id;
      await paused.close();

      const before = await snapshotStore(store.store);
      const cases: [string, Json, number, string, string | null][] = [
        ["t-paused", { checkpoint_id: "nope" }, 404, "no_such_checkpoint", null],
        ["t-paused", { checkpoint_id: foreign }, 404, "no_such_checkpoint", null],
        ["t-paused", { checkpoint_id: past }, 409, "invalid_argument", "thread_interrupted"],
        [
          "t-paused",
          { checkpoint_id: past, input: {} },
          409,
          "invalid_argument",
          "thread_interrupted",
        ],
        ["t-paused", {}, 400, "invalid_argument", null],
        ["t-paused", { checkpoint_id: past, input: "text" }, 400, "invalid_argument", null],
      ];
      for (const [threadId, params, status, error, code] of cases) {
        const reply = await command(threadId, { id: 1, method: "state.fork", params });
        expect({ params, status: reply.status, error: reply.body["error"] }).toEqual({
          params,
          status,
          error,
        });
        if (code) expect(reply.body["details"]).toMatchObject({ code });
      }
      // run.start's forkFrom: an unknown checkpoint, also on a thread that does not exist yet.
      for (const threadId of ["t-paused", "t-new"]) {
        const reply = await command(threadId, {
          id: 2,
          method: "run.start",
          params: {
            assistant_id: threadId === "t-new" ? "pipeline" : "ask",
            input: {},
            config: { configurable: { checkpoint_id: "nope" } },
          },
        });
        expect([reply.status, reply.body["error"]]).toEqual([404, "no_such_checkpoint"]);
      }
      expect(await snapshotStore(store.store)).toBe(before);
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
