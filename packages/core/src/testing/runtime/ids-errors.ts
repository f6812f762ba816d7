/**
 * Contracts of ids and errors: malformed thread ids are refused the same way on every store,
 * a node that returns something unstorable fails its run with a typed error (never leaving it
 * `running`), and addressing a thread that does not exist says so.
 */
import { it, expect } from "vitest";
import {
  Command,
  InvalidIdError,
  lastValue,
  MAX_THREAD_ID_LENGTH,
  NonSerializableError,
  NotFoundError,
  Send,
  START,
  StateGraph,
  type Checkpointer,
  type ThreadId,
} from "../../index.ts";
import { threadName, rejection, type RuntimeEnv } from "./harness.ts";

function simple(saver: Checkpointer) {
  return new StateGraph({ n: lastValue<number>(() => 0) })
    .addNode("inc", (s) => ({ n: s.n + 1 }))
    .addEdge(START, "inc")
    .compile({ checkpointer: saver, name: "ids" });
}

const BAD_IDS: readonly [string, string][] = [
  ["unpaired high surrogate", "thread-\uD800"],
  ["unpaired low surrogate", "thread-\uDC00-x"],
  ["NUL", "thread\u0000one"],
  ["too long", "x".repeat(10_000)],
  ["empty", ""],
];

/** Contracts of ids and errors. */
export function idErrorContracts(env: RuntimeEnv): void {
  it(
    "ctx.once gives its body the attempt number: an effect that did not store its result runs again with the same key",
    env.withStore(async (saver) => {
      const effects: [key: string, attempt: number][] = [];
      let failNext = true;
      const graph = new StateGraph({ receipt: lastValue<string>(() => "") })
        .addNode(
          "pay",
          async (_s, ctx) => {
            const receipt = await ctx.once("charge", (attempt) => {
              effects.push([ctx.idempotencyKey("charge"), attempt]);
              // The effect happened, then the process "died" before the result was stored.
              if (failNext) {
                failNext = false;
                throw new Error("connection reset after the charge");
              }
              return `r-${attempt}`;
            });
            ctx.interrupt("confirm?");
            return { receipt };
          },
          { retry: { maxAttempts: 2, initialIntervalMs: 1 } },
        )
        .addEdge(START, "pay")
        .compile({ checkpointer: saver, name: "once-attempts" });
      const threadId = threadName("once-attempt");
      const r1 = await graph.invoke({}, { threadId });
      expect(r1.status).toBe("interrupted");
      const key = effects[0]?.[0] as string;
      expect(effects).toEqual([
        [key, 1],
        [key, 2],
      ]);
      // Once stored, the result is replayed on every re-run: no third attempt.
      const done = await graph.resume({ threadId }, Command.resume(true));
      expect(done.values.receipt).toBe("r-2");
      expect(effects).toHaveLength(2);
      // Counted durably: a new series on another thread starts at 1 again.
      await graph.invoke({}, { threadId: threadName("once-attempt-2") });
      expect(effects.at(-1)?.[1]).toBe(1);
    }),
  );

  it(
    "malformed thread ids (unpaired surrogates, NUL, 10 KB, empty) are an InvalidIdError and store nothing",
    env.withStore(async (saver) => {
      const graph = simple(saver);
      for (const [why, threadId] of BAD_IDS) {
        const error = await rejection(() => graph.invoke({}, { threadId }));
        // An empty id reads as "no thread id", which has its own error.
        if (threadId === "") continue;
        expect(error, why).toBeInstanceOf(InvalidIdError);
        expect((error as InvalidIdError).code, why).toBe("invalid_id");
        expect(await rejection(() => graph.getState({ threadId })), why).toBeInstanceOf(
          InvalidIdError,
        );
        expect(
          await rejection(() => graph.resume({ threadId }, Command.resume(1))),
          why,
        ).toBeInstanceOf(InvalidIdError);
      }
      // The stores refuse them too, at every first write of a thread.
      for (const [why, threadId] of BAD_IDS) {
        const id = threadId as ThreadId;
        const now = new Date().toISOString();
        const thread = { threadId: id, tenant: null, metadata: {}, createdAt: now, updatedAt: now };
        expect(await rejection(saver.putThread(thread)), why).toBeInstanceOf(InvalidIdError);
        expect(await rejection(saver.acquireLease(id, "me", 1000)), why).toBeInstanceOf(
          InvalidIdError,
        );
      }
      expect((await saver.listThreads({})).items).toEqual([]);
      // Two ids that differ only in an unpaired surrogate never merge into one thread.
      const ok = "t-\uD83D\uDE00-" + "y".repeat(MAX_THREAD_ID_LENGTH - 5);
      expect(ok.length).toBe(MAX_THREAD_ID_LENGTH);
      expect((await graph.invoke({}, { threadId: ok })).values.n).toBe(1);
      expect((await saver.getThread(ok as ThreadId))?.threadId).toBe(ok);
    }),
  );

  it(
    "a node that returns a function fails its run with a typed error recorded, and the run is not left running",
    env.withStore(async (saver) => {
      const graph = new StateGraph({ cb: lastValue<unknown>(() => null), n: lastValue<number>() })
        .addNode("a", () => ({ n: 1 }))
        .addNode("bad", () => ({ cb: () => "callback" }))
        .addEdge(START, "a")
        .addEdge("a", "bad")
        .compile({ checkpointer: saver, name: "unstorable" });
      const threadId = threadName("fn-update");
      const result = await graph.invoke({}, { threadId });
      expect(result.status).toBe("error");
      expect(result.error).toMatchObject({ code: "non_serializable", node: "bad" });
      expect(result.error?.message).toContain("update.cb");
      const run = await saver.getRun(result.runId);
      expect(run?.status).toBe("error");
      expect(run?.error).toMatchObject({ code: "non_serializable", node: "bad" });
      // The last checkpoint is intact: the step before the bad node.
      expect((await graph.getState({ threadId })).values.n).toBe(1);
      // In a step with several tasks (each result stored on its own), and through a Send arg.
      const wide = new StateGraph({ out: lastValue<unknown>(() => null) })
        .addNode("fan", () => ({}))
        .addNode("ok", () => ({}))
        .addNode("worker", () => ({ out: new (class Opaque {})() }))
        .addEdge(START, "fan")
        .addConditionalEdges("fan", () => [new Send("worker", {}), new Send("ok", {})])
        .compile({ checkpointer: saver, name: "unstorable-wide" });
      const wideResult = await wide.invoke({}, { threadId: threadName("fn-wide") });
      expect(wideResult.status).toBe("error");
      expect(wideResult.error?.code).toBe("non_serializable");
      expect((await saver.getRun(wideResult.runId))?.status).toBe("error");
      // Bad input is refused before a run is recorded.
      const badInput = threadName("fn-input");
      const error = await rejection(graph.invoke({ cb: () => 1 }, { threadId: badInput }));
      expect(error).toBeInstanceOf(NonSerializableError);
      expect((error as NonSerializableError).details.path).toBe("input.cb");
      expect(await saver.listRuns(badInput as ThreadId)).toEqual([]);
    }),
  );

  it(
    "a 100,000-deep update or an invalid Date fails with a typed error, never an untyped RangeError",
    env.withStore(async (saver) => {
      let deep: Record<string, unknown> = { leaf: true };
      for (let i = 0; i < 100_000; i++) deep = { n: deep };
      const graph = new StateGraph({ v: lastValue<unknown>(() => null) })
        .addNode("deep", () => ({ v: deep }))
        .addEdge(START, "deep")
        .compile({ checkpointer: saver, name: "too-deep" });
      const result = await graph.invoke({}, { threadId: threadName("deep") });
      expect(result.status).toBe("error");
      expect(result.error).toMatchObject({
        name: "SerializationDepthError",
        code: "non_serializable",
        node: "deep",
      });
      expect((await saver.getRun(result.runId))?.status).toBe("error");
      const badDate = threadName("bad-date");
      const error = await rejection(() =>
        graph.invoke({ v: { at: new Date(Number.NaN) } }, { threadId: badDate }),
      );
      expect(error).toBeInstanceOf(NonSerializableError);
      expect((error as NonSerializableError).details).toMatchObject({
        path: "input.v.at",
        what: "an invalid Date",
      });
      expect(await saver.listRuns(badDate as ThreadId)).toEqual([]);
    }),
  );

  it(
    "resume on a thread that does not exist is a NotFoundError, not a stale target",
    env.withStore(async (saver) => {
      const graph = simple(saver);
      const missing = threadName("never-created");
      const plain = await rejection(graph.resume({ threadId: missing }, Command.resume(true)));
      expect(plain).toBeInstanceOf(NotFoundError);
      expect((plain as NotFoundError).code).toBe("not_found");
      expect((plain as NotFoundError).details).toMatchObject({ what: "thread", id: missing });
      const byMap = await rejection(
        graph.invoke(Command.resumeMap({ i_x: 1 }), { threadId: missing }),
      );
      expect(byMap).toBeInstanceOf(NotFoundError);
      expect(await saver.getThread(missing as ThreadId)).toBeUndefined();
    }),
  );
}
