/**
 * Contracts of steering edge cases: stale targets while a run is still active, the
 * pendingChildren policy on untargeted resumes, graphs without a name, and `invoke(null)` at a
 * static pause.
 */
import { it, expect } from "vitest";
import {
  append,
  Command,
  lastValue,
  NoMatchingTargetError,
  Send,
  StaleTargetError,
  START,
  StateGraph,
  type Checkpointer,
  type Interrupt,
  type InterruptId,
  type ThreadId,
} from "../../index.ts";
import { chainAB, gatedSupervisor } from "./graphs.ts";
import { Counter, threadName, rejection, type RuntimeEnv } from "./harness.ts";

/** Two parallel root tasks, each asking one question. */
function twoAsks(saver: Checkpointer, counter: Counter) {
  return new StateGraph({ items: lastValue<string[]>(() => []), out: append<string>() })
    .addNode("plan", () => ({}))
    .addNode("work", (input: { item: string }, ctx) => {
      counter.hit(input.item);
      return { out: `${input.item}:${ctx.interrupt<string>({ item: input.item })}` };
    })
    .addEdge(START, "plan")
    .addConditionalEdges("plan", (s) => s.items.map((item) => new Send("work", { item })))
    .compile({ checkpointer: saver, name: "two-asks" });
}

/** A supervisor that asks at its gate while two email sub-agents each ask too. */
function gated(saver: Checkpointer) {
  const agent = new StateGraph({ task: lastValue<string>(() => ""), log: append<string>() })
    .addNode("approve", (s, ctx) => ({
      log: `email ${s.task}: ${ctx.interrupt<string>({ task: s.task })}`,
    }))
    .addEdge(START, "approve")
    .compile({ checkpointer: saver, name: "email_agent" });
  return gatedSupervisor(saver, agent, "gated-supervisor");
}

function itemOf(i: Interrupt): string {
  return (i.payload as { item: string }).item;
}

/** Contracts of steering edge cases. */
export function steeringEdgeContracts(env: RuntimeEnv): void {
  it(
    "a target naming an answered interrupt or a finished task while its run is active is a StaleTargetError with the latest metadata",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = twoAsks(saver, counter);
      const threadId = threadName("stale-active");
      const r1 = await graph.invoke({ items: ["a", "b"] }, { threadId });
      const a = r1.interrupts.find((i) => itemOf(i) === "a") as Interrupt;
      const b = r1.interrupts.find((i) => itemOf(i) === "b") as Interrupt;
      const r2 = await graph.resumeTargeted(
        { runId: a.runId, namespace: [], interruptId: a.id },
        Command.resume("yes"),
      );
      // Task a finished (its writes wait for b); the run is still active, waiting on b.
      expect(r2.status).toBe("interrupted");
      for (const target of [
        { runId: a.runId, namespace: [], interruptId: a.id },
        { runId: a.runId, namespace: [], taskId: a.taskId },
      ]) {
        const label = target.interruptId ? "by interrupt id" : "by task id";
        const error = await rejection(graph.resumeTargeted(target, Command.resume("again")));
        expect(error, label).toBeInstanceOf(StaleTargetError);
        expect((error as StaleTargetError).details, label).toMatchObject({
          threadId,
          runId: r1.runId,
          runStatus: "interrupted",
          headCheckpointId: r2.checkpointId,
        });
        expect(
          (error as StaleTargetError).details.pendingInterrupts.map((i) => (i as Interrupt).id),
          label,
        ).toEqual([b.id]);
      }
      // The same with a resumeMap, and nothing was applied: a ran once after its answer.
      const byMap = await rejection(
        graph.resumeTargeted(
          { runId: a.runId, namespace: [] },
          Command.resumeMap({ [a.id]: "again" }),
        ),
      );
      expect(byMap).toBeInstanceOf(StaleTargetError);
      expect(counter.of("a")).toBe(2);
      // A target naming nothing the run ever asked is a NoMatchingTargetError, with metadata too.
      const unknown = await rejection(
        graph.resumeTargeted(
          { runId: a.runId, namespace: [], interruptId: "i_never" },
          Command.resume("x"),
        ),
      );
      expect(unknown).toBeInstanceOf(NoMatchingTargetError);
      expect((unknown as NoMatchingTargetError).details).toMatchObject({
        runStatus: "interrupted",
        headCheckpointId: r2.checkpointId,
      });
      const done = await graph.resumeTargeted(
        { runId: b.runId, namespace: [], interruptId: b.id },
        Command.resume("ok"),
      );
      expect(done.values.out.sort()).toEqual(["a:yes", "b:ok"]);
    }),
  );

  it(
    "steering aimed at an answered interrupt, a finished task or a finished run is refused and records nothing",
    env.withStore(async (saver) => {
      const graph = twoAsks(saver, new Counter());
      const threadId = threadName("steer-stale");
      const r1 = await graph.invoke({ items: ["a", "b"] }, { threadId });
      const a = r1.interrupts.find((i) => itemOf(i) === "a") as Interrupt;
      const b = r1.interrupts.find((i) => itemOf(i) === "b") as Interrupt;
      await graph.resumeTargeted(
        { runId: a.runId, namespace: [], interruptId: a.id },
        Command.resume("yes"),
      );
      const logs = async () =>
        JSON.stringify([
          await saver.listSteering(threadId as ThreadId),
          await saver.listAudit({ threadId: threadId as ThreadId }),
        ]);
      const before = await logs();
      for (const target of [
        { runId: a.runId, namespace: [], interruptId: a.id },
        { runId: a.runId, namespace: [], taskId: a.taskId },
      ]) {
        const error = await rejection(graph.steer(target, "too late", { actor: "ann" }));
        expect(error, JSON.stringify(target)).toBeInstanceOf(StaleTargetError);
        expect((error as StaleTargetError).details).toMatchObject({
          threadId,
          runId: r1.runId,
          runStatus: "interrupted",
        });
        expect(
          (error as StaleTargetError).details.pendingInterrupts.map((i) => (i as Interrupt).id),
        ).toEqual([b.id]);
      }
      const unknown = await rejection(
        graph.steer({ runId: a.runId, namespace: [], interruptId: "i_never" }, "x"),
      );
      expect(unknown).toBeInstanceOf(NoMatchingTargetError);
      expect(await logs()).toBe(before);
      // The pending one can still be steered; once the run is done, nothing can.
      await graph.steer({ runId: b.runId, namespace: [], interruptId: b.id }, "be brief");
      await graph.resumeTargeted(
        { runId: b.runId, namespace: [], interruptId: b.id },
        Command.resume("ok"),
      );
      const afterDone = await logs();
      const finished = await rejection(graph.steer({ runId: r1.runId, namespace: [] }, "late"));
      expect(finished).toBeInstanceOf(StaleTargetError);
      expect((finished as StaleTargetError).details).toMatchObject({ runStatus: "done" });
      expect(await logs()).toBe(afterDone);
      expect((await saver.listSteering(threadId as ThreadId)).map((x) => x.text)).toEqual([
        "be brief",
      ]);
    }),
  );

  it(
    "pendingChildren given to graph.resume or invoke(Command.resume) is applied to the root run's children",
    env.withStore(async (saver) => {
      const cancelled = threadName("children-cancel");
      const r1 = await gated(saver).invoke({ tasks: ["x", "y"] }, { threadId: cancelled });
      expect(r1.interrupts).toHaveLength(3);
      const children = r1.interrupts.filter((i) => i.namespace.length === 1);
      const r2 = await gated(saver).resume(
        { threadId: cancelled },
        Command.resume("open", { pendingChildren: "cancel" }),
      );
      expect(r2.status).toBe("done");
      expect(r2.values.log).toEqual(["gate: open"]);
      for (const child of children) {
        expect((await saver.getInterrupt(child.id))?.status, `child ${child.id}`).toBe("cancelled");
        expect((await saver.getRun(child.runId))?.status, `child ${child.id}`).toBe("cancelled");
      }
      const resolved = threadName("children-resolve");
      await gated(saver).invoke({ tasks: ["x", "y"] }, { threadId: resolved });
      const r3 = await gated(saver).invoke(
        Command.resume("open", { pendingChildren: { resolve: "auto" } }),
        { threadId: resolved },
      );
      expect(r3.status).toBe("done");
      expect([...r3.values.log].sort()).toEqual(["email x: auto", "email y: auto", "gate: open"]);
      // Without a policy a thread-level resume with several pending stays ambiguous, as before.
      const kept = threadName("children-keep");
      await gated(saver).invoke({ tasks: ["x"] }, { threadId: kept });
      const ambiguous = await rejection(
        gated(saver).resume({ threadId: kept }, Command.resume("o")),
      );
      expect((ambiguous as { code?: string }).code).toBe("ambiguous_resume");
    }),
  );

  it(
    "graphs compiled without a name do not share interrupts, runs or deadline timers",
    env.withStore(async (saver) => {
      const deadlineGraph = (node: string) =>
        new StateGraph({ decision: lastValue<string>(() => "") })
          .addNode(node, (_s, ctx) => ({
            decision: ctx.interrupt<string>(
              { node },
              { timeout: 10, onTimeout: `timeout-${node}` },
            ),
          }))
          .addEdge(START, node)
          .compile({ checkpointer: saver });
      const first = deadlineGraph("review");
      const second = deadlineGraph("approve");
      expect(first.name).not.toBe(second.name);
      // The same definition (another process) has the same name, so its timer finds its interrupts.
      expect(deadlineGraph("review").name).toBe(first.name);
      const t1 = threadName("unnamed-1");
      const t2 = threadName("unnamed-2");
      const r1 = await first.invoke({}, { threadId: t1 });
      const r2 = await second.invoke({}, { threadId: t2 });
      expect((await saver.getRun(r1.runId))?.graph).toBe(first.name);
      expect((await saver.getRun(r2.runId))?.graph).toBe(second.name);
      const later = new Date(Date.now() + 1000);
      expect(await first.resolveExpiredInterrupts(later)).toBe(1);
      expect((await saver.getInterrupt(r2.interrupts[0]?.id as InterruptId))?.status).toBe(
        "pending",
      );
      expect((await first.getState({ threadId: t1 })).values.decision).toBe("timeout-review");
      expect(await deadlineGraph("approve").resolveExpiredInterrupts(later)).toBe(1);
      expect((await second.getState({ threadId: t2 })).values.decision).toBe("timeout-approve");
      const listed = await first.listInterrupts({ status: "answered", graph: first.name });
      expect(listed.items.map((i) => i.threadId)).toEqual([t1]);
    }),
  );

  it(
    "invoke(null) at an interruptBefore/After pause continues; at a dynamic pause it continues nothing",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const build = (selectors: { interruptBefore?: string[]; interruptAfter?: string[] }) =>
        chainAB(saver, counter, { name: "static-null", ...selectors });
      const before = threadName("null-before");
      const r1 = await build({ interruptBefore: ["b"] }).invoke({}, { threadId: before });
      expect(r1.interrupts[0]).toMatchObject({ kind: "before", node: "b" });
      const done = await build({ interruptBefore: ["b"] }).invoke(null, {
        threadId: before,
        actor: "ops",
      });
      expect(done.status).toBe("done");
      expect(done.values.log).toEqual(["a", "b"]);
      const audit = await saver.listAudit({ threadId: before as ThreadId });
      expect(audit.items.filter((x) => x.action === "answer").map((x) => x.actor)).toEqual(["ops"]);
      const after = threadName("null-after");
      await build({ interruptAfter: ["a"] }).invoke({}, { threadId: after });
      const events = [];
      for await (const event of build({ interruptAfter: ["a"] }).stream(null, {
        threadId: after,
      }))
        events.push(event);
      const end = events.at(-1);
      expect(end?.type === "end" && end.result.status).toBe("done");
      expect(end?.type === "end" && end.result.values.log).toEqual(["a", "b"]);
      // A dynamic interrupt needs a person's answer: null continues nothing.
      const ask = new StateGraph({ answer: lastValue<string>(() => "") })
        .addNode("ask", (_s, ctx) => {
          counter.hit("ask");
          return { answer: ctx.interrupt<string>("?") };
        })
        .addEdge(START, "ask")
        .compile({ checkpointer: saver, name: "dynamic-null", interruptBefore: ["ask"] });
      const dynamic = threadName("null-dynamic");
      await ask.invoke({}, { threadId: dynamic });
      const passed = await ask.invoke(null, { threadId: dynamic });
      expect(passed.interrupts).toMatchObject([{ kind: "dynamic", node: "ask" }]);
      const asked = counter.of("ask");
      const still = await ask.invoke(null, { threadId: dynamic });
      expect(still.status).toBe("interrupted");
      expect(still.interrupts.map((i) => i.id)).toEqual(passed.interrupts.map((i) => i.id));
      expect(counter.of("ask")).toBe(asked);
    }),
  );
}
