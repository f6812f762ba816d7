/**
 * Contracts of SPEC §3: subgraphs run as child runs, a targeted resume reaches exactly its target,
 * paused siblings do not run, steering is recorded apart from answers, stale targets are refused.
 */
import { expect } from "vitest";
import { append, lastValue } from "../../channels.ts";
import type { Checkpointer } from "../../checkpoint/types.ts";
import { NoMatchingTargetError, StaleTargetError } from "../../errors.ts";
import { childRunIdFor, type RunId, type ThreadId } from "../../ids.ts";
import { Command, Send } from "../../graph/command.ts";
import { START, StateGraph } from "../../graph/state-graph.ts";
import type { Interrupt } from "../../types.ts";
import { Counter, threadName, type Contract } from "./harness.ts";

/** A sub-agent that does some work, then asks for approval, then acts. */
function subAgent(saver: Checkpointer, name: string, counter: Counter) {
  return new StateGraph({ task: lastValue<string>(() => ""), log: append<string>() })
    .addNode("work", (s) => {
      counter.hit(`${name}:work:${s.task}`);
      return { log: `${name} worked on ${s.task}` };
    })
    .addNode("approve", (s, ctx) => {
      counter.hit(`${name}:approve:${s.task}`);
      const answer = ctx.interrupt<string>({ agent: name, task: s.task });
      return {
        log: `${name} ${s.task}: ${answer}${ctx.steering.length ? ` (steered: ${ctx.steering.map((x) => x.text).join("; ")})` : ""}`,
      };
    })
    .addEdge(START, "work")
    .addEdge("work", "approve")
    .compile({ checkpointer: saver, name });
}

/** An orchestrator that fans out to `agent` once per task, in parallel. */
function orchestrator(saver: Checkpointer, counter: Counter, agentName = "research_agent") {
  const agent = subAgent(saver, agentName, counter);
  return new StateGraph({ tasks: lastValue<string[]>(() => []), log: append<string>() })
    .addNode("plan", () => {
      counter.hit("plan");
      return {};
    })
    .addNode("agent", agent)
    .addNode("report", (s) => {
      counter.hit("report");
      return { log: `report of ${s.log.length}` };
    })
    .addEdge(START, "plan")
    .addConditionalEdges("plan", (s) => s.tasks.map((task) => new Send("agent", { task })))
    .addEdge("agent", "report")
    .compile({ checkpointer: saver, name: "supervisor" });
}

function taskOf(i: Interrupt): string {
  return (i.payload as { task: string }).task;
}

/** Contracts of run trees and targeted steering. */
export const runTreeContracts: readonly Contract[] = [
  [
    "a compiled graph added as a node runs as a child run with a deterministic id, its namespace and a parent link",
    async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("child");
      const r1 = await graph.invoke({ tasks: ["a"] }, { threadId });
      expect(r1.status).toBe("interrupted");
      const [pending] = r1.interrupts;
      expect(pending?.namespace).toEqual(["agent"]);
      expect(pending?.runId).not.toBe(r1.runId);
      const state = await graph.getState({ threadId }, { subgraphs: true });
      const parentTask = state.tasks.find((t) => t.node === "agent");
      expect(pending?.runId).toBe(childRunIdFor(r1.runId, parentTask?.id as string, 0));
      const runs = await saver.listRuns(threadId as ThreadId);
      const child = runs.find((r) => r.runId === pending?.runId);
      expect(child).toMatchObject({
        parentRunId: r1.runId,
        parentTaskId: parentTask?.id,
        graph: "research_agent",
        namespace: ["agent"],
        status: "interrupted",
      });
      expect(state.subgraphs?.map((s) => [s.subAgentId, s.status])).toEqual([
        [`research_agent:${pending?.runId}`, "interrupted"],
      ]);
      expect(state.subgraphs?.[0]?.tasks[0]?.interrupts.map((i) => i.id)).toEqual([pending?.id]);
    },
  ],
  [
    "resuming continues the child from its checkpoint: its finished nodes do not run again",
    async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("continue");
      await graph.invoke({ tasks: ["a"] }, { threadId });
      const done = await graph.resume({ threadId }, Command.resume("ok"));
      expect(done.status).toBe("done");
      expect(counter.of("research_agent:work:a")).toBe(1);
      expect(counter.of("research_agent:approve:a")).toBe(2);
      expect(done.values.log).toEqual([
        "research_agent worked on a",
        "research_agent a: ok",
        "report of 2",
      ]);
    },
  ],
  [
    "parallel instances of one subgraph are distinct child runs in the same namespace",
    async (saver) => {
      const graph = orchestrator(saver, new Counter());
      const r1 = await graph.invoke(
        { tasks: ["a", "b", "c"] },
        { threadId: threadName("instances") },
      );
      expect(r1.interrupts).toHaveLength(3);
      expect(new Set(r1.interrupts.map((i) => i.runId)).size).toBe(3);
      for (const i of r1.interrupts) expect(i.namespace).toEqual(["agent"]);
    },
  ],
  [
    "resuming one child resumes that child task only: paused siblings do not run and keep their ids",
    async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("targeted");
      const r1 = await graph.invoke({ tasks: ["a", "b", "c"] }, { threadId });
      const target = r1.interrupts.find((i) => taskOf(i) === "b") as Interrupt;
      const r2 = await graph.resumeTargeted(
        { runId: target.runId, namespace: ["agent"] },
        Command.resume("approved"),
      );
      expect(r2.status).toBe("interrupted");
      expect(counter.of("research_agent:approve:b")).toBe(2);
      expect(counter.of("research_agent:approve:a")).toBe(1);
      expect(counter.of("research_agent:approve:c")).toBe(1);
      for (const task of ["a", "b", "c"]) expect(counter.of(`research_agent:work:${task}`)).toBe(1);
      expect(counter.of("report")).toBe(0);
      expect(r2.interrupts.map((i) => i.id).sort()).toEqual(
        r1.interrupts
          .filter((i) => i.id !== target.id)
          .map((i) => i.id)
          .sort(),
      );
      for (const sibling of r2.interrupts)
        await graph.resumeTargeted(
          { runId: sibling.runId, namespace: ["agent"], interruptId: sibling.id },
          Command.resume("fine"),
        );
      const state = await graph.getState({ threadId });
      expect(state.next).toEqual([]);
      expect(counter.of("report")).toBe(1);
      expect(state.values.log.filter((l) => l.includes(": "))).toEqual([
        "research_agent a: fine",
        "research_agent b: approved",
        "research_agent c: fine",
      ]);
    },
  ],
  [
    "a target that matches nothing is an error listing what is pending; a single value for several is ambiguous",
    async (saver) => {
      const graph = orchestrator(saver, new Counter());
      const threadId = threadName("no-match");
      const r1 = await graph.invoke({ tasks: ["a", "b"] }, { threadId });
      const wrongNs = await graph
        .resumeTargeted(
          { runId: r1.interrupts[0]?.runId as string, namespace: ["elsewhere"] },
          Command.resume(1),
        )
        .catch((e: unknown) => e);
      expect(wrongNs).toBeInstanceOf(NoMatchingTargetError);
      expect((wrongNs as NoMatchingTargetError).details.pending).toHaveLength(2);
      const root = await graph
        .resumeTargeted({ runId: r1.runId, namespace: [] }, Command.resume(1))
        .catch((e: unknown) => e);
      expect(root).toBeInstanceOf(NoMatchingTargetError);
      const pending = await saver.getThreadInterrupts(threadId as ThreadId, "pending");
      expect(pending).toHaveLength(2);
    },
  ],
  [
    "resuming the parent keeps, cancels or resolves pending children as the policy says",
    async (saver) => {
      const counter = new Counter();
      const agent = subAgent(saver, "email_agent", counter);
      const build = () =>
        new StateGraph({ tasks: lastValue<string[]>(() => []), log: append<string>() })
          .addNode("fan", () => ({}))
          .addNode("agent", agent)
          .addNode("gate", (_s, ctx) => ({ log: `gate: ${ctx.interrupt<string>({ gate: true })}` }))
          .addEdge(START, "fan")
          .addEdge("fan", "gate")
          .addConditionalEdges("fan", (s) => s.tasks.map((task) => new Send("agent", { task })))
          .compile({ checkpointer: saver, name: "supervisor" });
      for (const policy of ["keep", "cancel", "resolve"] as const) {
        const threadId = threadName(`policy-${policy}`);
        const graph = build();
        const r1 = await graph.invoke({ tasks: ["x", "y"] }, { threadId });
        expect(r1.interrupts).toHaveLength(3);
        const before = counter.total();
        const r2 = await graph.resumeTargeted(
          { runId: r1.runId, namespace: [] },
          Command.resume("open", {
            pendingChildren: policy === "resolve" ? { resolve: "auto" } : policy,
          }),
        );
        const children = r1.interrupts.filter((i) => i.namespace.length === 1);
        const statuses = await Promise.all(
          children.map(async (c) => (await saver.getInterrupt(c.id))?.status),
        );
        if (policy === "keep") {
          expect(r2.status).toBe("interrupted");
          expect(statuses).toEqual(["pending", "pending"]);
          expect(r2.interrupts.map((i) => i.id).sort()).toEqual(children.map((c) => c.id).sort());
          expect(counter.total()).toBe(before);
        } else if (policy === "cancel") {
          expect(statuses).toEqual(["cancelled", "cancelled"]);
          expect(r2.status).toBe("done");
          const audit = await saver.listAudit({ threadId: threadId as ThreadId });
          expect(
            audit.items
              .filter((a) => a.action === "cancel")
              .map((a) => a.interruptId)
              .sort(),
          ).toEqual(children.map((c) => c.id).sort());
          for (const c of children) expect((await saver.getRun(c.runId))?.status).toBe("cancelled");
          expect(
            r2.values.log.filter(
              (l) => l.startsWith("email_agent x:") || l.startsWith("email_agent y:"),
            ),
          ).toEqual([]);
        } else {
          expect(statuses).toEqual(["answered", "answered"]);
          expect(r2.status).toBe("done");
          expect(r2.values.log.filter((l) => l.includes(": auto"))).toHaveLength(2);
        }
      }
    },
  ],
  [
    "steering is recorded apart from the answer and read by node code in its scope",
    async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("steer");
      const r1 = await graph.invoke({ tasks: ["a", "b"] }, { threadId });
      const a = r1.interrupts.find((i) => taskOf(i) === "a") as Interrupt;
      const b = r1.interrupts.find((i) => taskOf(i) === "b") as Interrupt;
      const r2 = await graph.resumeTargeted(
        { runId: a.runId, namespace: ["agent"] },
        Command.resume("approved", { steering: "Refund half only", actor: "alice@example.com" }),
      );
      const steering = await saver.listSteering(threadId as ThreadId);
      expect(steering).toHaveLength(1);
      expect(steering[0]).toMatchObject({
        runId: a.runId,
        text: "Refund half only",
        actor: "alice@example.com",
        namespace: ["agent"],
      });
      // The parent step commits when its last task ends; the child's own state shows the result.
      const state = await graph.getState({ threadId }, { subgraphs: true });
      const childA = state.subgraphs?.find((s) => s.runId === a.runId);
      expect(childA?.status).toBe("done");
      expect(childA?.values.log).toContain(
        "research_agent a: approved (steered: Refund half only)",
      );
      // The sibling is out of scope: it neither ran nor sees the instruction.
      expect(r2.interrupts.map((i) => i.id)).toEqual([b.id]);
      // Steering without resuming reaches the next execution in that scope.
      await graph.steer({ runId: b.runId, namespace: ["agent"] }, "Be brief", { actor: "bob" });
      expect(counter.of("research_agent:approve:b")).toBe(1);
      await graph.resumeTargeted({ runId: b.runId, namespace: ["agent"] }, Command.resume("ok"));
      const done = await graph.getState({ threadId });
      expect(done.values.log).toContain("research_agent b: ok (steered: Be brief)");
      const audit = await saver.listAudit({ threadId: threadId as ThreadId });
      expect(audit.items.filter((x) => x.action === "steer").map((x) => x.actor)).toEqual([
        "alice@example.com",
        "bob",
      ]);
      expect(audit.items.filter((x) => x.action === "answer").map((x) => x.actor)).toEqual([
        "alice@example.com",
        "anonymous",
      ]);
    },
  ],
  [
    "stale targets are rejected with the latest metadata: answered interrupt, finished run, moved head",
    async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("stale-targets");
      const r1 = await graph.invoke({ tasks: ["a", "b"] }, { threadId });
      // The two children pause concurrently, so the pending list's order between them is not
      // fixed: pick each by its task.
      const byTask = (task: string): Interrupt =>
        r1.interrupts.find((i) => (i.payload as { task?: string }).task === task) as Interrupt;
      const [first, second] = [byTask("a"), byTask("b")];
      const movedHead = await graph
        .resumeTargeted(
          {
            runId: r1.runId,
            namespace: ["agent"],
            interruptId: first.id,
            expectedCheckpointId: "0000-old",
          },
          Command.resume("x"),
        )
        .catch((e: unknown) => e);
      expect(movedHead).toBeInstanceOf(StaleTargetError);
      expect((movedHead as StaleTargetError).details.headCheckpointId).toBe(r1.checkpointId);
      await graph.resumeTargeted(
        { runId: first.runId, namespace: ["agent"], interruptId: first.id },
        Command.resume("x"),
      );
      const answered = await graph
        .resumeTargeted(
          { runId: first.runId, namespace: ["agent"], interruptId: first.id },
          Command.resume("y"),
        )
        .catch((e: unknown) => e);
      expect(answered).toBeInstanceOf(StaleTargetError);
      const details = (answered as StaleTargetError).details;
      expect(details.runStatus).toBe("done");
      expect(details.pendingInterrupts.map((i) => (i as Interrupt).id)).toEqual([second.id]);
      expect(counter.of("research_agent:approve:a")).toBe(2);
    },
  ],
  [
    "two people answering the same interrupt at once: exactly one wins",
    async (saver) => {
      const counter = new Counter();
      const threadId = threadName("race");
      const r1 = await orchestrator(saver, counter).invoke({ tasks: ["a"] }, { threadId });
      const [pending] = r1.interrupts as [Interrupt];
      const attempts = await Promise.allSettled(
        ["alice", "bob", "carol"].map((actor) =>
          orchestrator(saver, counter).resumeTargeted(
            { runId: pending.runId, namespace: ["agent"], interruptId: pending.id },
            Command.resume(actor, { actor }),
          ),
        ),
      );
      const won = attempts.filter((a) => a.status === "fulfilled");
      const lost = attempts.filter((a) => a.status === "rejected");
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(2);
      for (const l of lost) expect(l.reason).toBeInstanceOf(StaleTargetError);
      const log = (await orchestrator(saver, counter).getState({ threadId })).values.log;
      expect(log.filter((l) => l.startsWith("research_agent a:"))).toHaveLength(1);
      expect(counter.of("research_agent:approve:a")).toBe(2);
    },
  ],
  [
    "a per-run selector path pauses before a node inside a sub-agent, without editing its code",
    async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("selector-path");
      const r1 = await graph.invoke({ tasks: ["a"] }, { threadId, interruptBefore: ["*/work"] });
      expect(r1.status).toBe("interrupted");
      expect(r1.interrupts).toHaveLength(1);
      expect(r1.interrupts[0]).toMatchObject({
        kind: "before",
        node: "work",
        namespace: ["agent"],
      });
      expect(counter.of("research_agent:work:a")).toBe(0);
      const r2 = await graph.resume({ threadId }, Command.resume());
      expect(counter.of("research_agent:work:a")).toBe(1);
      expect(r2.interrupts).toMatchObject([
        { kind: "dynamic", node: "approve", namespace: ["agent"] },
      ]);
      const done = await graph.resume({ threadId }, Command.resume("ok"));
      expect(done.status).toBe("done");
    },
  ],
  [
    "a child invoked from node code is a child run of the calling task",
    async (saver) => {
      const counter = new Counter();
      const agent = subAgent(saver, "refund_agent", counter);
      const graph = new StateGraph({ log: append<string>() })
        .addNode("call", async (_s) => {
          const result = await agent.invoke({ task: "r1" });
          return { log: `child said ${result.values.log.at(-1)}` };
        })
        .addEdge(START, "call")
        .compile({ checkpointer: saver, name: "supervisor" });
      const threadId = threadName("invoke-child");
      const r1 = await graph.invoke({}, { threadId });
      expect(r1.interrupts).toHaveLength(1);
      expect(r1.interrupts[0]?.namespace).toEqual(["call"]);
      const done = await graph.resumeTargeted(
        { runId: r1.interrupts[0]?.runId as RunId, namespace: ["call"] },
        Command.resume("yes"),
      );
      expect(done.status).toBe("done");
      expect(done.values.log).toEqual(["child said refund_agent r1: yes"]);
      expect(counter.of("refund_agent:work:r1")).toBe(1);
    },
  ],
  [
    "listInterrupts serves the queue across threads with run-tree paths, sub-agent ids and cursors",
    async (saver) => {
      const graph = orchestrator(saver, new Counter());
      const threads = [threadName("q1"), threadName("q2")];
      for (const threadId of threads) await graph.invoke({ tasks: ["a", "b"] }, { threadId });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<typeof graph.listInterrupts>> = await graph.listInterrupts({
          status: "pending",
          limit: 3,
          cursor,
        });
        for (const item of page.items) {
          seen.push(item.id);
          expect(item.path).toHaveLength(2);
          expect(item.path[0]).toMatchObject({ graph: "supervisor", node: "agent" });
          expect(item.path[1]).toMatchObject({
            runId: item.runId,
            graph: "research_agent",
            node: "approve",
            taskId: item.taskId,
          });
          expect(item.subAgentId).toBe(`research_agent:${item.runId}`);
          expect(item.ageMs).toBeGreaterThanOrEqual(0);
          expect(item.checkpointId).toBeTruthy();
        }
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen).toHaveLength(4);
      expect(new Set(seen).size).toBe(4);
      const one = await graph.listInterrupts({ threadId: threads[0] as string });
      expect(one.items).toHaveLength(2);
    },
  ],
];

/** Contracts of deadlines: durable timers resolve expired interrupts, also after a restart. */
export const deadlineContracts: readonly Contract[] = [
  [
    "an expired interrupt is answered with onTimeout's value by the next process that looks",
    async (saver) => {
      const build = () =>
        new StateGraph({ decision: lastValue<string>() })
          .addNode("ask", (_s, ctx) => ({
            decision: ctx.interrupt<string>(
              { q: "ship?" },
              { timeout: "1s", onTimeout: "auto-reject" },
            ),
          }))
          .addEdge(START, "ask")
          .compile({ checkpointer: saver });
      const threadId = threadName("deadline");
      const r1 = await build().invoke({}, { threadId });
      expect(r1.status).toBe("interrupted");
      expect(await build().resolveExpiredInterrupts(new Date())).toBe(0);
      // A new graph object stands for a process started after the deadline passed.
      const resolved = await build().resolveExpiredInterrupts(new Date(Date.now() + 2000));
      expect(resolved).toBe(1);
      const state = await build().getState({ threadId });
      expect(state.values.decision).toBe("auto-reject");
      expect(state.next).toEqual([]);
      const audit = await saver.listAudit({ threadId: threadId as ThreadId });
      expect(audit.items.find((a) => a.action === "timeout")?.actor).toBe("system:timer");
    },
  ],
  [
    "an expired interrupt with onTimeout cancel ends its task without writes",
    async (saver) => {
      const graph = new StateGraph({
        decision: lastValue<string>(() => "none"),
        after: lastValue<boolean>(() => false),
      })
        .addNode("ask", (_s, ctx) => ({
          decision: ctx.interrupt<string>({ q: "?" }, { timeout: 10, onTimeout: "cancel" }),
        }))
        .addNode("next", () => ({ after: true }))
        .addEdge(START, "ask")
        .addEdge("ask", "next")
        .compile({ checkpointer: saver });
      const threadId = threadName("deadline-cancel");
      const r1 = await graph.invoke({}, { threadId });
      await graph.resolveExpiredInterrupts(new Date(Date.now() + 1000));
      expect((await saver.getInterrupt(r1.interrupts[0]?.id as never))?.status).toBe("cancelled");
      const state = await graph.getState({ threadId });
      expect(state.values.decision).toBe("none");
    },
  ],
];

/** The 1,000-children contract: heavier, so registered with a longer timeout. */
export const wideFanOutContracts: readonly Contract[] = [
  [
    "with 1,000 paused children, answering one runs that child's task only",
    async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("wide");
      const tasks = Array.from({ length: 1000 }, (_, i) => `t${i}`);
      const r1 = await graph.invoke({ tasks }, { threadId });
      expect(r1.interrupts).toHaveLength(1000);
      expect(counter.total()).toBe(1 + 2000);
      const target = r1.interrupts.find((i) => taskOf(i) === "t500") as Interrupt;
      const r2 = await graph.resumeTargeted(
        { runId: target.runId, namespace: ["agent"] },
        Command.resume("yes"),
      );
      expect(r2.interrupts).toHaveLength(999);
      // Exactly one more node body ran: the answered child's approve node.
      expect(counter.total()).toBe(1 + 2000 + 1);
      expect(counter.of("research_agent:approve:t500")).toBe(2);
      expect(counter.of("research_agent:approve:t499")).toBe(1);
    },
  ],
];

/** The deadline timer contract (a real timer, so kept apart from the clock-driven ones). */
export const deadlineTimerContracts: readonly Contract[] = [
  [
    "startDeadlineTimer resolves an interrupt once its deadline passes, without anyone calling",
    async (saver) => {
      const graph = new StateGraph({ decision: lastValue<string>() })
        .addNode("ask", (_s, ctx) => ({
          decision: ctx.interrupt<string>({ q: "?" }, { timeout: "200ms", onTimeout: "expired" }),
        }))
        .addEdge(START, "ask")
        .compile({ checkpointer: saver, name: "timed" });
      const threadId = threadName("timer");
      await graph.invoke({}, { threadId });
      const timer = graph.startDeadlineTimer({ intervalMs: 50 });
      try {
        expect(await timer.ready).toBe(0);
        const deadline = Date.now() + 10_000;
        while ((await graph.getState({ threadId })).values.decision !== "expired") {
          if (Date.now() > deadline) throw new Error("the timer never resolved the interrupt");
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        timer.stop();
      }
      expect((await graph.getState({ threadId })).next).toEqual([]);
    },
  ],
];
