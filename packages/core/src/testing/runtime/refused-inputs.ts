/**
 * Contracts of SPEC §2 on mistaken inputs: an ambiguous, stale, unstorable or ill-typed answer, or
 * plain input to a paused thread, fails loudly with a typed error and changes nothing; a repeated
 * request id applies once.
 */
import { z } from "zod";
import { it, expect } from "vitest";
import {
  AmbiguousResumeError,
  Command,
  InvalidAnswerError,
  InvalidInputError,
  lastValue,
  NonSerializableError,
  StaleTargetError,
  START,
  StateGraph,
  ThreadInterruptedError,
} from "../../index.ts";
import { approvalGraph, fanOut, orchestrator, taskOf } from "./graphs.ts";
import { Counter, rejection, threadName, type RuntimeEnv } from "./harness.ts";

/** Contracts of inputs that a paused thread refuses. */
export function refusedInputContracts(env: RuntimeEnv): void {
  it(
    "Command.resume with several interrupts in scope is an AmbiguousResumeError listing them, and changes nothing",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = fanOut(saver, counter);
      const threadId = threadName("ambiguous");
      const r1 = await graph.invoke({ items: ["a", "b"] }, { threadId });
      const error = await graph.resume({ threadId }, Command.resume("x")).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AmbiguousResumeError);
      expect((error as AmbiguousResumeError).details.pending).toHaveLength(2);
      const state = await graph.getState({ threadId });
      expect(state.interrupts.map((i) => i.id).sort()).toEqual(
        r1.interrupts.map((i) => i.id).sort(),
      );
      expect(counter.total()).toBe(2);
    }),
  );

  it(
    "an object answer is never taken for a resume map",
    env.withStore(async (saver) => {
      const graph = approvalGraph(saver, new Counter());
      const threadId = threadName("object-answer");
      const r1 = await graph.invoke({ amount: 1 }, { threadId });
      const id = r1.interrupts[0]?.id as string;
      // An object keyed by the pending id, sent with Command.resume, is the answer itself.
      const done = await graph.resume({ threadId }, Command.resume({ [id]: true, ok: true }));
      expect(done.values.log).toEqual(["prepared", "approved"]);
    }),
  );

  it(
    "resumeMap with an unknown or answered id is a StaleTargetError with the latest metadata, and changes nothing",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = approvalGraph(saver, counter);
      const threadId = threadName("stale");
      const r1 = await graph.invoke({ amount: 1 }, { threadId });
      const unknown = await graph
        .resume({ threadId }, Command.resumeMap({ i_nope: 1 }))
        .catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(StaleTargetError);
      const details = (unknown as StaleTargetError).details;
      expect(details.threadId).toBe(threadId);
      expect(details.headCheckpointId).toBe(r1.checkpointId);
      expect(details.pendingInterrupts).toHaveLength(1);
      await graph.resume(
        { threadId },
        Command.resumeMap({ [r1.interrupts[0]?.id as string]: { ok: true } }),
      );
      const before = await graph.getState({ threadId });
      const again = await graph
        .resume(
          { threadId },
          Command.resumeMap({ [r1.interrupts[0]?.id as string]: { ok: false } }),
        )
        .catch((e: unknown) => e);
      expect(again).toBeInstanceOf(StaleTargetError);
      const after = await graph.getState({ threadId });
      expect(after.values).toEqual(before.values);
      expect(after.checkpointId).toBe(before.checkpointId);
      expect(counter.of("approve:after")).toBe(1);
    }),
  );

  it(
    "plain input to a paused thread is a ThreadInterruptedError and starts nothing; onPending cancel discards the pause",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = approvalGraph(saver, counter);
      const threadId = threadName("plain-input");
      const r1 = await graph.invoke({ amount: 1 }, { threadId });
      const error = await graph.invoke({ amount: 2 }, { threadId }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ThreadInterruptedError);
      expect((error as ThreadInterruptedError).message).toMatch(/Command\.resume/);
      const state = await graph.getState({ threadId });
      expect(state.checkpointId).toBe(r1.checkpointId);
      expect(state.values.amount).toBe(1);
      expect(counter.of("prepare")).toBe(1);
      const restarted = await graph.invoke({ amount: 3 }, { threadId, onPending: "cancel" });
      expect(restarted.status).toBe("interrupted");
      expect(restarted.interrupts).toHaveLength(1);
      expect(restarted.interrupts[0]?.id).not.toBe(r1.interrupts[0]?.id);
      const old = (await saver.getInterrupt(r1.interrupts[0]?.id as never))?.status;
      expect(old).toBe("cancelled");
    }),
  );

  it(
    "a history cursor that is no checkpoint of the thread is an InvalidInputError, never a restart from the newest",
    env.withStore(async (saver) => {
      const graph = approvalGraph(saver, new Counter());
      const threadId = threadName("history-cursor");
      const other = await graph.invoke({}, { threadId: threadName("history-other") });
      await graph.invoke({}, { threadId });
      const [newest] = await graph.getStateHistory({ threadId }, { limit: 1 });
      const [older] = await graph.getStateHistory(
        { threadId },
        { limit: 1, before: newest?.checkpointId as string },
      );
      expect(older?.checkpointId).not.toBe(newest?.checkpointId);
      for (const before of ["bogus", "0", other.checkpointId as string]) {
        const error = await rejection(graph.getStateHistory({ threadId }, { limit: 1, before }));
        expect(error, before).toBeInstanceOf(InvalidInputError);
        expect((error as InvalidInputError).details, before).toEqual({ before, threadId });
      }
    }),
  );

  it(
    "onPending cancel on a thread paused in sub-agents cancels the whole paused run tree and starts the input",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("cancel-tree");
      const r1 = await graph.invoke({ tasks: ["a", "b"] }, { threadId });
      expect(r1.interrupts.map((i) => i.namespace)).toEqual([["agent"], ["agent"]]);
      const r2 = await graph.invoke({ tasks: ["c"] }, { threadId, onPending: "cancel" });
      expect(r2.runId).not.toBe(r1.runId);
      expect(r2.interrupts.map(taskOf)).toEqual(["c"]);
      expect((await saver.getRun(r1.runId))?.status).toBe("cancelled");
      for (const old of r1.interrupts) {
        expect((await saver.getInterrupt(old.id))?.status).toBe("cancelled");
        expect((await saver.getRun(old.runId))?.status).toBe("cancelled");
      }
    }),
  );

  it(
    "a payload that cannot be stored is a NonSerializableError naming its path, raised before anything is stored",
    env.withStore(async (saver) => {
      const graph = new StateGraph({ x: lastValue<number>() })
        .addNode("bad", (_s, ctx) => {
          ctx.interrupt({ items: [{ ok: 1 }, { callback: () => 1 }] });
        })
        .addEdge(START, "bad")
        .compile({ checkpointer: saver });
      const threadId = threadName("nonser");
      const result = await graph.invoke({}, { threadId });
      expect(result.status).toBe("error");
      expect(result.error?.code).toBe("non_serializable");
      expect(result.error?.message).toContain("payload.items[1].callback");
      expect(await saver.getThreadInterrupts(threadId as never)).toEqual([]);
      let caught: unknown;
      const direct = new StateGraph({ x: lastValue<number>() })
        .addNode("bad", (_s, ctx) => {
          try {
            ctx.interrupt({ when: new Date(0), fn: Symbol("s") });
          } catch (error) {
            caught = error;
          }
        })
        .addEdge(START, "bad")
        .compile({ checkpointer: saver });
      const quiet = await direct.invoke({}, { threadId: threadName("nonser2") });
      expect(caught).toBeInstanceOf(NonSerializableError);
      expect((caught as NonSerializableError).details.path).toBe("payload.fn");
      expect(quiet.status).toBe("done");
    }),
  );

  it(
    "an answer that does not match the interrupt's schema is rejected before anything is stored",
    env.withStore(async (saver) => {
      const graph = new StateGraph({ amount: lastValue<number>() })
        .addNode("ask", (_s, ctx) => ({
          amount: ctx.interrupt(
            { question: "how much?" },
            { answer: z.object({ amount: z.number().max(100) }) },
          ).amount,
        }))
        .addEdge(START, "ask")
        .compile({ checkpointer: saver });
      const threadId = threadName("typed");
      const r1 = await graph.invoke({}, { threadId });
      const bad = await graph
        .resume({ threadId }, Command.resume({ amount: "lots" }))
        .catch((e: unknown) => e);
      expect(bad).toBeInstanceOf(InvalidAnswerError);
      const tooMuch = await graph
        .resume({ threadId }, Command.resume({ amount: 500 }))
        .catch((e: unknown) => e);
      expect(tooMuch).toBeInstanceOf(InvalidAnswerError);
      const row = await saver.getInterrupt(r1.interrupts[0]?.id as never);
      expect(row?.status).toBe("pending");
      const audit = await saver.listAudit({ threadId: threadId as never });
      expect(audit.items.filter((a) => a.action === "answer")).toEqual([]);
      const done = await graph.resume({ threadId }, Command.resume({ amount: 42 }));
      expect(done.values.amount).toBe(42);
    }),
  );

  it(
    "a duplicate request id returns the original outcome without applying twice",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = approvalGraph(saver, counter);
      const threadId = threadName("dedupe");
      await graph.invoke({ amount: 1 }, { threadId });
      const first = await graph.resume(
        { threadId },
        Command.resume({ ok: true }, { requestId: "req-1" }),
      );
      const second = await graph.resume(
        { threadId },
        Command.resume({ ok: false }, { requestId: "req-1" }),
      );
      expect(second.status).toBe(first.status);
      expect(second.checkpointId).toBe(first.checkpointId);
      expect(second.values).toEqual(first.values);
      expect(counter.of("approve:after")).toBe(1);
      const audit = await saver.listAudit({ threadId: threadId as never });
      expect(audit.items.filter((a) => a.action === "answer")).toHaveLength(1);
    }),
  );
}
