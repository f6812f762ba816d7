/**
 * Contracts of SPEC §3 on targeted resume: a resume aimed at one child reaches exactly that child,
 * paused siblings do not run, the parent's pending children follow the policy given, and stale,
 * unmatched or concurrent targets are refused with the latest metadata.
 */
import { it, expect } from "vitest";
import {
  Command,
  NoMatchingTargetError,
  StaleTargetError,
  type Interrupt,
  type ThreadId,
} from "../../index.ts";
import { gatedSupervisor, subAgent, orchestrator, taskOf } from "./graphs.ts";
import { Counter, threadName, type RuntimeEnv } from "./harness.ts";

/** Contracts of targeted resume. */
export function targetedResumeContracts(env: RuntimeEnv): void {
  it(
    "resuming one child resumes that child task only: paused siblings do not run and keep their ids",
    env.withStore(async (saver) => {
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
      for (const task of ["a", "b", "c"])
        expect(counter.of(`research_agent:work:${task}`), `task ${task}`).toBe(1);
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
    }),
  );

  it(
    "a target that matches nothing is an error listing what is pending; a single value for several is ambiguous",
    env.withStore(async (saver) => {
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
    }),
  );

  it(
    "resuming the parent keeps, cancels or resolves pending children as the policy says",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const agent = subAgent(saver, "email_agent", counter);
      const build = () => gatedSupervisor(saver, agent, "supervisor");
      for (const policy of ["keep", "cancel", "resolve"] as const) {
        const threadId = threadName(`policy-${policy}`);
        const graph = build();
        const r1 = await graph.invoke({ tasks: ["x", "y"] }, { threadId });
        expect(r1.interrupts, `policy ${policy}`).toHaveLength(3);
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
          expect(r2.status, `policy ${policy}`).toBe("interrupted");
          expect(statuses, `policy ${policy}`).toEqual(["pending", "pending"]);
          expect(r2.interrupts.map((i) => i.id).sort(), `policy ${policy}`).toEqual(
            children.map((c) => c.id).sort(),
          );
          expect(counter.total(), `policy ${policy}`).toBe(before);
        } else if (policy === "cancel") {
          expect(statuses, `policy ${policy}`).toEqual(["cancelled", "cancelled"]);
          expect(r2.status, `policy ${policy}`).toBe("done");
          const audit = await saver.listAudit({ threadId: threadId as ThreadId });
          expect(
            audit.items
              .filter((a) => a.action === "cancel")
              .map((a) => a.interruptId)
              .sort(),
            `policy ${policy}`,
          ).toEqual(children.map((c) => c.id).sort());
          for (const c of children)
            expect(
              (await saver.getRun(c.runId))?.status,
              `policy ${policy}, child run ${c.runId}`,
            ).toBe("cancelled");
          expect(
            r2.values.log.filter(
              (l) => l.startsWith("email_agent x:") || l.startsWith("email_agent y:"),
            ),
            `policy ${policy}`,
          ).toEqual([]);
        } else {
          expect(statuses, `policy ${policy}`).toEqual(["answered", "answered"]);
          expect(r2.status, `policy ${policy}`).toBe("done");
          expect(
            r2.values.log.filter((l) => l.includes(": auto")),
            `policy ${policy}`,
          ).toHaveLength(2);
        }
      }
    }),
  );

  it(
    "stale targets are rejected with the latest metadata: answered interrupt, finished run, moved head",
    env.withStore(async (saver) => {
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
    }),
  );

  it(
    "two people answering the same interrupt at once: exactly one wins",
    env.withStore(async (saver) => {
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
      for (const l of lost)
        expect(l.reason, `attempt ${attempts.indexOf(l)}`).toBeInstanceOf(StaleTargetError);
      const log = (await orchestrator(saver, counter).getState({ threadId })).values.log;
      expect(log.filter((l) => l.startsWith("research_agent a:"))).toHaveLength(1);
      expect(counter.of("research_agent:approve:a")).toBe(2);
    }),
  );
}
