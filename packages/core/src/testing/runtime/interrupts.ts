/**
 * Contracts of SPEC §2: interrupts are an exception plus a checkpoint; answers are matched by
 * order or key; every call is its own interrupt; stale, ambiguous and mistaken inputs fail loudly.
 */
import { expect } from "vitest";
import { z } from "zod";
import { append, lastValue } from "../../channels.ts";
import type { Checkpointer } from "../../checkpoint/types.ts";
import {
  AmbiguousResumeError,
  InvalidAnswerError,
  InvalidInputError,
  NonSerializableError,
  StaleTargetError,
  ThreadInterruptedError,
} from "../../errors.ts";
import { Command, Send } from "../../graph/command.ts";
import { END, START, StateGraph } from "../../graph/state-graph.ts";
import { RunConfig } from "../../graph/options.ts";
import { interrupt } from "../../engine/context.ts";
import type { StreamEvent } from "../../engine/events.ts";
import { Counter, threadName, type Contract } from "./harness.ts";

function approvalGraph(saver: Checkpointer, counter: Counter) {
  return new StateGraph({ amount: lastValue<number>(() => 0), log: append<string>() })
    .addNode("prepare", () => {
      counter.hit("prepare");
      return { log: "prepared" };
    })
    .addNode("approve", (s, ctx) => {
      counter.hit("approve");
      const answer = ctx.interrupt<{ ok: boolean }>({ question: "refund?", amount: s.amount });
      counter.hit("approve:after");
      return { log: answer.ok ? "approved" : "rejected" };
    })
    .addEdge(START, "prepare")
    .addEdge("prepare", "approve")
    .addEdge("approve", END)
    .compile({ checkpointer: saver, name: "approval" });
}

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** Contracts of interrupts and resume. */
export const interruptContracts: readonly Contract[] = [
  [
    "an interrupt returns a typed RunResult and stores the pause; nothing stays in memory",
    async (saver) => {
      const counter = new Counter();
      const threadId = threadName("pause");
      const result = await approvalGraph(saver, counter).invoke({ amount: 50 }, { threadId });
      expect(result.status).toBe("interrupted");
      expect(result.threadId).toBe(threadId);
      expect(result.values.log).toEqual(["prepared"]);
      expect(result.interrupts).toHaveLength(1);
      const [pending] = result.interrupts;
      expect(pending).toMatchObject({
        threadId,
        node: "approve",
        namespace: [],
        order: 0,
        kind: "dynamic",
        status: "pending",
        payload: { question: "refund?", amount: 50 },
      });
      expect(pending?.checkpointId).toBe(result.checkpointId);
      expect(pending?.runId).toBe(result.runId);
      // A brand-new graph object (as another process would build) sees and resumes the pause.
      const other = approvalGraph(saver, counter);
      const state = await other.getState({ threadId });
      expect(state.interrupts.map((i) => i.id)).toEqual([pending?.id]);
      const done = await other.resume(RunConfig.thread(threadId), Command.resume({ ok: true }));
      expect(done.status).toBe("done");
      expect(done.values.log).toEqual(["prepared", "approved"]);
      expect(done.interrupts).toEqual([]);
    },
  ],
  [
    "resuming re-runs the interrupted node from its first statement, and only that node",
    async (saver) => {
      const counter = new Counter();
      const threadId = threadName("rerun");
      const graph = approvalGraph(saver, counter);
      await graph.invoke({ amount: 5 }, { threadId });
      await graph.resume(RunConfig.thread(threadId), Command.resume({ ok: false }));
      expect(counter.of("prepare")).toBe(1);
      expect(counter.of("approve")).toBe(2);
      expect(counter.of("approve:after")).toBe(1);
      expect((await graph.getState({ threadId })).values.log).toEqual(["prepared", "rejected"]);
    },
  ],
  [
    "the k-th interrupt() call gets the k-th answer; the first unanswered call pauses as the next order",
    async (saver) => {
      const seen: unknown[][] = [];
      const graph = new StateGraph({ answers: lastValue<unknown[]>(() => []) })
        .addNode("ask", (_s, ctx) => {
          const a = ctx.interrupt("first");
          const b = ctx.interrupt("second");
          const c = ctx.interrupt("third");
          seen.push([a, b, c]);
          return { answers: [a, b, c] };
        })
        .addEdge(START, "ask")
        .compile({ checkpointer: saver });
      const threadId = threadName("order");
      const r1 = await graph.invoke({}, { threadId });
      expect(r1.interrupts.map((i) => [i.order, i.payload])).toEqual([[0, "first"]]);
      const r2 = await graph.resume({ threadId }, Command.resume("A"));
      expect(r2.interrupts.map((i) => [i.order, i.payload])).toEqual([[1, "second"]]);
      expect(r2.interrupts[0]?.id).not.toBe(r1.interrupts[0]?.id);
      // Answer by the id the order yields, too.
      const r3 = await graph.resume(
        { threadId },
        Command.resumeMap({ [r2.interrupts[0]?.id as string]: "B" }),
      );
      expect(r3.interrupts.map((i) => i.order)).toEqual([2]);
      const r4 = await graph.resume({ threadId }, Command.resume("C"));
      expect(r4.status).toBe("done");
      expect(r4.values.answers).toEqual(["A", "B", "C"]);
      expect(seen).toEqual([["A", "B", "C"]]);
    },
  ],
  [
    "concurrent interrupt() calls in one task each get their own id and can be answered on their own",
    async (saver) => {
      const executed: string[] = [];
      const tools = ["search", "refund", "email"];
      const graph = new StateGraph({ results: lastValue<string[]>(() => []) })
        .addNode("tools", async () => {
          const outcomes = await Promise.all(
            tools.map(async (tool) => {
              await Promise.resolve();
              const decision = interrupt<string>({ tool });
              executed.push(`${tool}:${decision}`);
              return `${tool}=${decision}`;
            }),
          );
          return { results: outcomes };
        })
        .addEdge(START, "tools")
        .compile({ checkpointer: saver });
      const threadId = threadName("parallel-calls");
      const r1 = await graph.invoke({}, { threadId });
      expect(r1.interrupts).toHaveLength(3);
      expect(new Set(r1.interrupts.map((i) => i.id)).size).toBe(3);
      expect(r1.interrupts.map((i) => (i.payload as { tool: string }).tool).sort()).toEqual(
        [...tools].sort(),
      );
      const byTool = new Map(
        r1.interrupts.map((i) => [(i.payload as { tool: string }).tool, i.id]),
      );
      const r2 = await graph.resume(
        { threadId },
        Command.resumeMap({ [byTool.get("refund") as string]: "yes" }),
      );
      expect(r2.status).toBe("interrupted");
      expect(r2.interrupts.map((i) => i.id).sort()).toEqual(
        [byTool.get("search"), byTool.get("email")].sort(),
      );
      const r3 = await graph.resume(
        { threadId },
        Command.resumeMap({
          [byTool.get("search") as string]: "s",
          [byTool.get("email") as string]: "e",
        }),
      );
      expect(r3.status).toBe("done");
      expect(r3.values.results).toEqual(["search=s", "refund=yes", "email=e"]);
    },
  ],
  [
    "keyed interrupts keep their answers when concurrent calls arrive in another order on the re-run",
    async (saver) => {
      let run = 0;
      const graph = new StateGraph({ results: lastValue<string[]>(() => []) })
        .addNode("tools", async (_s, ctx) => {
          run += 1;
          const calls = run === 1 ? ["a", "b"] : ["b", "a"];
          const results = await Promise.all(
            calls.map((id) =>
              Promise.resolve().then(
                () => `${id}=${ctx.interrupt<string>({ call: id }, { key: id })}`,
              ),
            ),
          );
          return { results: results.sort() };
        })
        .addEdge(START, "tools")
        .compile({ checkpointer: saver });
      const threadId = threadName("keys");
      const r1 = await graph.invoke({}, { threadId });
      const ids = new Map(r1.interrupts.map((i) => [(i.payload as { call: string }).call, i.id]));
      const done = await graph.resume(
        { threadId },
        Command.resumeMap({ [ids.get("a") as string]: "A", [ids.get("b") as string]: "B" }),
      );
      expect(done.status).toBe("done");
      expect(done.values.results).toEqual(["a=A", "b=B"]);
    },
  ],
  [
    "two interrupt() calls with one key in one task are an error",
    async (saver) => {
      const graph = new StateGraph({ x: lastValue<number>() })
        .addNode("n", (_s, ctx) => {
          try {
            ctx.interrupt("one", { key: "k" });
          } catch {
            // the first call pauses; the second must be refused
          }
          ctx.interrupt("two", { key: "k" });
        })
        .addEdge(START, "n")
        .compile({ checkpointer: saver });
      const result = await graph.invoke({}, { threadId: threadName("dupkey") });
      // The first call still pauses the task (a caught interrupt pauses), and the second call's
      // error is what the node threw; the pending interrupt is the first one only.
      expect(result.status).toBe("interrupted");
      expect(result.interrupts.map((i) => i.payload)).toEqual(["one"]);
      let thrown: unknown;
      const probe = new StateGraph({ x: lastValue<number>() })
        .addNode("n", async (_s, ctx) => {
          await Promise.allSettled([
            Promise.resolve().then(() => ctx.interrupt("a", { key: "same" })),
          ]);
          try {
            ctx.interrupt("b", { key: "same" });
          } catch (error) {
            thrown = error;
          }
        })
        .addEdge(START, "n")
        .compile({ checkpointer: saver });
      await probe.invoke({}, { threadId: threadName("dupkey2") });
      expect(thrown).toBeInstanceOf(InvalidInputError);
    },
  ],
  [
    "a caught interrupt still pauses, its return value is discarded, and a debug event says so",
    async (saver) => {
      const graph = new StateGraph({ out: lastValue<string>(() => "untouched") })
        .addNode("wrapper", (_s, ctx) => {
          try {
            ctx.interrupt({ confirm: true });
          } catch {
            return { out: "swallowed" };
          }
          return { out: "answered" };
        })
        .addEdge(START, "wrapper")
        .compile({ checkpointer: saver });
      const threadId = threadName("caught");
      const events = await collect(graph.stream({}, { threadId, streamMode: ["debug", "values"] }));
      const end = events.find((e) => e.type === "end");
      expect(end?.type === "end" && end.result.status).toBe("interrupted");
      expect(end?.type === "end" && end.result.values.out).toBe("untouched");
      expect(events.some((e) => e.type === "debug" && /caught its interrupt/.test(e.message))).toBe(
        true,
      );
      expect(events.filter((e) => e.type === "interrupt")).toHaveLength(1);
      const done = await graph.resume({ threadId }, Command.resume("ok"));
      expect(done.values.out).toBe("answered");
    },
  ],
  [
    "Command.resume with several interrupts in scope is an AmbiguousResumeError listing them, and changes nothing",
    async (saver) => {
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
    },
  ],
  [
    "an object answer is never taken for a resume map",
    async (saver) => {
      const graph = approvalGraph(saver, new Counter());
      const threadId = threadName("object-answer");
      const r1 = await graph.invoke({ amount: 1 }, { threadId });
      const id = r1.interrupts[0]?.id as string;
      // An object keyed by the pending id, sent with Command.resume, is the answer itself.
      const done = await graph.resume({ threadId }, Command.resume({ [id]: true, ok: true }));
      expect(done.values.log).toEqual(["prepared", "approved"]);
    },
  ],
  [
    "resumeMap with an unknown or answered id is a StaleTargetError with the latest metadata, and changes nothing",
    async (saver) => {
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
    },
  ],
  [
    "plain input to a paused thread is a ThreadInterruptedError and starts nothing; onPending cancel discards the pause",
    async (saver) => {
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
    },
  ],
  [
    "a payload that cannot be stored is a NonSerializableError naming its path, raised before anything is stored",
    async (saver) => {
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
    },
  ],
  [
    "an answer that does not match the interrupt's schema is rejected before anything is stored",
    async (saver) => {
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
    },
  ],
  [
    "a duplicate request id returns the original outcome without applying twice",
    async (saver) => {
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
    },
  ],
  [
    "ctx.once runs a side effect once per (thread, task, key) across re-runs, with a stable idempotency key",
    async (saver) => {
      const charges: string[] = [];
      const graph = new StateGraph({ receipt: lastValue<string>() })
        .addNode("refund", async (_s, ctx) => {
          const receipt = await ctx.once("charge", () => {
            charges.push(ctx.idempotencyKey("charge"));
            return `r${charges.length}`;
          });
          ctx.interrupt("confirm 1");
          ctx.interrupt("confirm 2");
          return { receipt };
        })
        .addEdge(START, "refund")
        .compile({ checkpointer: saver });
      const threadId = threadName("once");
      await graph.invoke({}, { threadId });
      await graph.resume({ threadId }, Command.resume(true));
      const done = await graph.resume({ threadId }, Command.resume(true));
      expect(done.status).toBe("done");
      expect(charges).toHaveLength(1);
      expect(done.values.receipt).toBe("r1");
      expect(charges[0]).toContain(threadId);
    },
  ],
  [
    "answering one of K parallel interrupts re-runs exactly that task",
    async (saver) => {
      const counter = new Counter();
      const graph = fanOut(saver, counter);
      const threadId = threadName("k-parallel");
      const items = ["a", "b", "c", "d", "e"];
      const r1 = await graph.invoke({ items }, { threadId });
      expect(r1.interrupts).toHaveLength(5);
      expect(counter.total()).toBe(5);
      const target = r1.interrupts.find((i) => (i.payload as { item: string }).item === "c");
      const r2 = await graph.resume(
        { threadId },
        Command.resumeMap({ [target?.id as string]: "C" }),
      );
      expect(counter.of("c")).toBe(2);
      for (const other of ["a", "b", "d", "e"]) expect(counter.of(other)).toBe(1);
      expect(r2.interrupts.map((i) => i.id).sort()).toEqual(
        r1.interrupts
          .filter((i) => i !== target)
          .map((i) => i.id)
          .sort(),
      );
      let remaining = r2.interrupts;
      while (remaining.length > 0) {
        const next = remaining[0];
        const r = await graph.resume(
          { threadId },
          Command.resumeMap({ [next?.id as string]: "ok" }),
        );
        remaining = r.interrupts;
        if (r.status === "done")
          expect(r.values.out.sort()).toEqual(["a:ok", "b:ok", "c:C", "d:ok", "e:ok"]);
      }
      expect(counter.total()).toBe(10);
    },
  ],
  [
    "the determinism guard supersedes an answered question that changed, and never applies the old answer",
    async (saver) => {
      let amount = 50;
      const applied: number[] = [];
      const graph = new StateGraph({ paid: lastValue<number>() })
        .addNode("refund", (_s, ctx) => {
          const ok = ctx.interrupt<boolean>({ action: "refund", amount });
          if (ok) applied.push(amount);
          return { paid: ok ? amount : 0 };
        })
        .addEdge(START, "refund")
        .compile({ checkpointer: saver });
      const threadId = threadName("determinism");
      const r1 = await graph.invoke({}, { threadId });
      amount = 500; // node code is not deterministic: the question changes on re-run
      const events = await collect(
        graph.stream(Command.resume(true), { threadId, streamMode: ["debug"] }),
      );
      const end = events.find((e) => e.type === "end");
      expect(end?.type === "end" && end.result.status).toBe("interrupted");
      expect(applied).toEqual([]);
      const fresh = end?.type === "end" ? end.result.interrupts : [];
      expect(fresh).toHaveLength(1);
      expect(fresh[0]?.id).not.toBe(r1.interrupts[0]?.id);
      expect(fresh[0]?.payload).toEqual({ action: "refund", amount: 500 });
      expect((await saver.getInterrupt(r1.interrupts[0]?.id as never))?.status).toBe("superseded");
      expect(events.some((e) => e.type === "debug" && /superseded/.test(e.message))).toBe(true);
      const done = await graph.resume({ threadId }, Command.resume(true));
      expect(applied).toEqual([500]);
      expect(done.values.paid).toBe(500);
    },
  ],
  [
    "with determinism off a changed question takes the recorded answer",
    async (saver) => {
      let amount = 50;
      const graph = new StateGraph({ paid: lastValue<number>() })
        .addNode("refund", (_s, ctx) => ({ paid: ctx.interrupt<boolean>({ amount }) ? amount : 0 }))
        .addEdge(START, "refund")
        .compile({ checkpointer: saver, determinism: "off" });
      const threadId = threadName("determinism-off");
      await graph.invoke({}, { threadId });
      amount = 60;
      const done = await graph.resume({ threadId }, Command.resume(true));
      expect(done.values.paid).toBe(60);
    },
  ],
  [
    "interruptBefore holds only the matching task; the other tasks of the step run and keep their writes",
    async (saver) => {
      const counter = new Counter();
      const graph = new StateGraph({ log: append<string>() })
        .addNode("fork", () => ({}))
        .addNode("safe", () => {
          counter.hit("safe");
          return { log: "safe" };
        })
        .addNode("risky", () => {
          counter.hit("risky");
          return { log: "risky" };
        })
        .addEdge(START, "fork")
        .addEdge("fork", "safe")
        .addEdge("fork", "risky")
        .compile({ checkpointer: saver, interruptBefore: ["risky"] });
      const threadId = threadName("before");
      const r1 = await graph.invoke({}, { threadId });
      expect(r1.status).toBe("interrupted");
      expect(r1.interrupts).toHaveLength(1);
      expect(r1.interrupts[0]).toMatchObject({ kind: "before", node: "risky" });
      expect(counter.of("safe")).toBe(1);
      expect(counter.of("risky")).toBe(0);
      const state = await graph.getState({ threadId });
      expect(state.tasks.find((t) => t.node === "safe")?.status).toBe("done");
      const done = await graph.resume({ threadId }, Command.resume());
      expect(done.status).toBe("done");
      expect(counter.of("safe")).toBe(1);
      expect(counter.of("risky")).toBe(1);
      expect(done.values.log).toEqual(["safe", "risky"]);
    },
  ],
  [
    "interruptAfter and per-run selectors pause without editing node code",
    async (saver) => {
      const counter = new Counter();
      const build = (interruptAfter?: string[]) =>
        new StateGraph({ log: append<string>() })
          .addNode("a", () => {
            counter.hit("a");
            return { log: "a" };
          })
          .addNode("b", () => {
            counter.hit("b");
            return { log: "b" };
          })
          .addEdge(START, "a")
          .addEdge("a", "b")
          .compile({ checkpointer: saver, ...(interruptAfter ? { interruptAfter } : {}) });
      const threadId = threadName("after");
      const r1 = await build(["a"]).invoke({}, { threadId });
      expect(r1.status).toBe("interrupted");
      expect(r1.interrupts[0]).toMatchObject({ kind: "after", node: "a" });
      expect(r1.values.log).toEqual(["a"]);
      expect(counter.of("b")).toBe(0);
      const done = await build(["a"]).resume({ threadId }, Command.resume());
      expect(done.values.log).toEqual(["a", "b"]);
      const perRun = threadName("per-run");
      const r2 = await build().invoke({}, { threadId: perRun, interruptBefore: ["b"] });
      expect(r2.interrupts[0]).toMatchObject({ kind: "before", node: "b" });
      expect(counter.of("b")).toBe(1);
      const done2 = await build().resume({ threadId: perRun }, Command.resume());
      expect(done2.values.log).toEqual(["a", "b"]);
      // After the last node too: the run waits before it is done.
      const last = threadName("after-last");
      const r3 = await build(["b"]).invoke({}, { threadId: last });
      expect(r3.status).toBe("interrupted");
      expect(r3.interrupts[0]).toMatchObject({ kind: "after", node: "b" });
      expect(r3.values.log).toEqual(["a", "b"]);
      const done3 = await build(["b"]).resume({ threadId: last }, Command.resume());
      expect(done3.status).toBe("done");
      expect((await saver.getRun(done3.runId))?.status).toBe("done");
    },
  ],
];

function fanOut(saver: Checkpointer, counter: Counter) {
  return new StateGraph({ items: lastValue<string[]>(() => []), out: append<string>() })
    .addNode("plan", () => ({}))
    .addNode("work", (input: { item: string }, ctx) => {
      counter.hit(input.item);
      const answer = ctx.interrupt<string>({ item: input.item });
      return { out: `${input.item}:${answer}` };
    })
    .addEdge(START, "plan")
    .addConditionalEdges("plan", (s) => s.items.map((item) => new Send("work", { item })))
    .compile({ checkpointer: saver, name: "fanout" });
}

export { fanOut };
