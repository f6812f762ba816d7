/**
 * Contracts of the escalation ladder on every store (run by {@link runWebhookConformance}): the
 * deadline timer reminds, escalates, then resolves; each step once (also with two racing timers),
 * in the audit chain (actor `system:timer`) and on the webhook outbox; an escalation admits its
 * approvers only from its time on, and a refused answer before it changes nothing.
 */
import { expect } from "vitest";
import {
  Command,
  lastValue,
  NotAllowedError,
  RunConfig,
  START,
  StateGraph,
  type ApprovalPrincipal,
  type Checkpointer,
  type ThreadId,
} from "../index.ts";
import type { InterruptOptions } from "../graph/node.ts";
import type { ClaimedDelivery, WebhookStore } from "../checkpoint/webhooks.ts";
import { storedPolicy } from "../checkpoint/approvals.ts";
import { dueStep, ladderStepWrite, planLadder } from "../interrupts/ladder.ts";
import {
  checkpointId,
  makeCheckpoint,
  makeCommit,
  makeInterrupt,
  makeOutcome,
  makeThread,
  pausedResult,
  taskId,
} from "./fixtures.ts";

type Body = (saver: Checkpointer, webhooks: WebhookStore) => Promise<void>;

const HOUR = 3_600_000;
const agent: ApprovalPrincipal = { subject: "sam", groups: ["support"] };
const manager: ApprovalPrincipal = { subject: "maria", groups: ["managers"] };

/** The ladder under test: remind at 1 h and 2 h, escalate to managers at 3 h, time out at 4 h. */
const LADDER: InterruptOptions<string> = {
  approvers: { groups: ["support"] },
  remind: ["1h", "2h"],
  escalate: { after: "3h", approvers: { groups: ["managers"] } },
  timeout: "4h",
  onTimeout: "defaulted",
};

function ladderGraph(saver: Checkpointer, options: InterruptOptions<string> = LADDER) {
  return new StateGraph({ decision: lastValue<string>() })
    .addNode("ask", (_s, ctx) => ({ decision: ctx.interrupt<string>({ q: "refund?" }, options) }))
    .addEdge(START, "ask")
    .compile({ checkpointer: saver, name: "ladder" });
}

async function asked(saver: Checkpointer, options?: InterruptOptions<string>) {
  const graph = ladderGraph(saver, options);
  const threadId = `ladder-${Math.random().toString(36).slice(2, 10)}`;
  const result = await graph.invoke({}, { threadId, actor: "rita" });
  const id = result.interrupts[0]?.id;
  if (result.status !== "interrupted" || !id) throw new Error("the question was not asked");
  return { graph, threadId, id, at: Date.now() };
}

/** The thread's events on the outbox, in the order they were written. */
async function events(webhooks: WebhookStore, threadId: string): Promise<string[]> {
  const now = new Date(Date.now() + 10 * HOUR).toISOString();
  const claims = await webhooks.claimDeliveries(now, new Date(0).toISOString(), 1000);
  return claims
    .filter((c) => c.event.threadId === threadId)
    .sort((a: ClaimedDelivery, b: ClaimedDelivery) =>
      a.event.createdAt < b.event.createdAt ? -1 : a.event.createdAt > b.event.createdAt ? 1 : 0,
    )
    .map((c) => c.event.type);
}

async function timerActions(saver: Checkpointer, threadId: string): Promise<string[]> {
  const audit = await saver.listAudit({ threadId: threadId as ThreadId });
  return audit.items.filter((a) => a.actor === "system:timer").map((a) => a.action);
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

/** Registers the ladder contracts with `spec`. */
export function registerLadderSpecs(spec: (title: string, body: Body) => void): void {
  registerLadderReraiseSpec(spec);
  spec(
    "a ladder reminds twice, escalates, then times out: each step once, audited and emitted in order",
    async (saver, webhooks) => {
      await webhooks.createSubscription(makeLadderSubscription());
      const { graph, threadId, id, at } = await asked(saver);
      const tick = async (hours: number) => {
        await pause();
        return graph.resolveExpiredInterrupts(new Date(at + hours * HOUR + 1000));
      };
      const stored = await saver.getInterrupt(id);
      expect(stored?.ladder?.remindAt).toHaveLength(2);
      await tick(0.5);
      expect((await saver.getInterrupt(id as never))?.stage ?? null).toBeNull();
      await tick(1);
      await tick(1); // the same time again: the step is taken, nothing more happens
      const reminded = await saver.getInterrupt(id);
      expect(reminded?.stage).toBe("reminded");
      expect(reminded?.status).toBe("pending");
      await tick(2);
      await tick(3);
      const escalated = await graph.getState({ threadId });
      expect(escalated.next).toEqual(["ask"]);
      const view = (await saver.getInterrupt(id))?.stage;
      expect(view).toBe("escalated");
      expect(await tick(4)).toBe(1);
      expect((await graph.getState({ threadId })).values.decision).toBe("defaulted");
      expect(await timerActions(saver, threadId)).toEqual([
        "remind",
        "remind",
        "escalate",
        "timeout",
      ]);
      expect(await events(webhooks, threadId)).toEqual([
        "interrupt.pending",
        "interrupt.reminded",
        "interrupt.reminded",
        "interrupt.escalated",
        "interrupt.expired",
      ]);
      const verified = await saver.verifyAudit({ threadId: threadId as ThreadId });
      expect(verified.ok).toBe(true);
      expect(verified.checked).toBe(4);
    },
  );

  spec(
    "an escalation admits its approvers only from its time on; a refused answer before it changes nothing",
    async (saver) => {
      const { graph, threadId, id, at } = await asked(saver);
      const answer = (who: ApprovalPrincipal, value: string) =>
        graph.resume(
          RunConfig.thread(threadId),
          Command.resume(value, { actor: who.subject, principal: who }),
        );
      await graph.resolveExpiredInterrupts(new Date(at + 2 * HOUR + 1000));
      const before = JSON.stringify({
        interrupts: await saver.getThreadInterrupts(threadId as ThreadId),
        audit: await saver.listAudit({ threadId: threadId as ThreadId }),
      });
      const refused = await answer(manager, "approve").then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(NotAllowedError);
      expect((refused as NotAllowedError).details.rule).toBe("not_listed");
      const after = JSON.stringify({
        interrupts: await saver.getThreadInterrupts(threadId as ThreadId),
        audit: await saver.listAudit({ threadId: threadId as ThreadId }),
      });
      expect(after).toBe(before);
      await graph.resolveExpiredInterrupts(new Date(at + 3 * HOUR + 1000));
      const escalated = await saver.getInterrupt(id);
      expect(escalated?.policy?.groups).toEqual(["support", "managers"]);
      expect(escalated?.policy?.count).toBe(1);
      const applied = await answer(manager, "approve");
      expect(applied.status).toBe("done");
      expect(applied.values.decision).toBe("approve");
      const record = await saver.getInterrupt(id);
      expect(record?.answeredBy).toBe("maria");
      // The agent the policy always listed may still answer after an escalation (another thread).
      const second = await asked(saver);
      await second.graph.resolveExpiredInterrupts(new Date(second.at + 3 * HOUR + 1000));
      const byAgent = await second.graph.resume(
        RunConfig.thread(second.threadId),
        Command.resume("yes", { actor: agent.subject, principal: agent }),
      );
      expect(byAgent.values.decision).toBe("yes");
    },
  );

  spec("two racing timers take each ladder step exactly once", async (saver, webhooks) => {
    await webhooks.createSubscription(makeLadderSubscription());
    const { graph, threadId, at } = await asked(saver);
    // Four graph objects stand for four processes' timers, all firing at each step's time.
    const timers = Array.from({ length: 4 }, () => ladderGraph(saver));
    for (const hours of [1, 2, 3]) {
      const now = new Date(at + hours * HOUR + 1000);
      await Promise.all(timers.map((timer) => timer.resolveExpiredInterrupts(now)));
      await pause();
    }
    expect(await timerActions(saver, threadId)).toEqual(["remind", "remind", "escalate"]);
    expect(await events(webhooks, threadId)).toEqual([
      "interrupt.pending",
      "interrupt.reminded",
      "interrupt.reminded",
      "interrupt.escalated",
    ]);
    expect((await graph.getState({ threadId })).next).toEqual(["ask"]);
  });

  spec(
    "a timer that comes late takes every due step in order, then resolves",
    async (saver, webhooks) => {
      await webhooks.createSubscription(makeLadderSubscription());
      const { graph, threadId, at } = await asked(saver);
      expect(await graph.resolveExpiredInterrupts(new Date(at + 5 * HOUR))).toBe(1);
      expect(await timerActions(saver, threadId)).toEqual([
        "remind",
        "remind",
        "escalate",
        "timeout",
      ]);
      const types = await events(webhooks, threadId);
      expect([...types].sort()).toEqual(
        [
          "interrupt.pending",
          "interrupt.reminded",
          "interrupt.reminded",
          "interrupt.escalated",
          "interrupt.expired",
        ].sort(),
      );
      expect((await saver.verifyAudit({ threadId: threadId as ThreadId })).ok).toBe(true);
    },
  );

  spec(
    "without a policy an escalation is recorded and emitted; answered questions take no more steps",
    async (saver, webhooks) => {
      await webhooks.createSubscription(makeLadderSubscription());
      const { graph, threadId, id, at } = await asked(saver, {
        remind: "1h",
        escalate: { after: "2h", approvers: { subjects: ["maria"] } },
      });
      await graph.resolveExpiredInterrupts(new Date(at + 2 * HOUR + 1000));
      const record = await saver.getInterrupt(id);
      expect(record?.stage).toBe("escalated");
      expect(record?.policy ?? null).toBeNull();
      // No timeout: the ladder ends with the escalation and the question stays pending.
      expect(record?.deadline ?? null).toBeNull();
      await graph.resume(RunConfig.thread(threadId), Command.resume("ok", { actor: "anyone" }));
      expect(await timerActions(saver, threadId)).toEqual(["remind", "escalate"]);
      expect(await events(webhooks, threadId)).toEqual([
        "interrupt.pending",
        "interrupt.reminded",
        "interrupt.escalated",
        "interrupt.answered",
      ]);
    },
  );
}

/** A question raised again (its task outcome stored again, same id) keeps the step it reached. */
export function registerLadderReraiseSpec(spec: (title: string, body: Body) => void): void {
  spec(
    "a question raised again after ladder steps keeps its ladder, its step and its widened policy",
    async (saver) => {
      const now = new Date();
      const { ladder, deadline } = planLadder(
        {
          remind: "1h",
          escalate: { after: "2h", approvers: { groups: ["managers"] } },
          timeout: "3h",
        },
        now,
      );
      const policy = storedPolicy({ groups: ["support"] }, "rita", { question: "approve r1?" });
      const fresh = makeInterrupt("re", "r1", {
        taskId: taskId("task-r1"),
        deadline,
        ladder,
        policy,
        onTimeout: { kind: "cancel" },
      });
      const raise = () =>
        saver.putTaskOutcome(
          makeOutcome("re", checkpointId(1), pausedResult("task-r1"), { interrupts: [fresh] }),
        );
      await saver.putThread(makeThread("re"));
      await saver.commitStep(makeCommit(makeCheckpoint("re", checkpointId(1)), null));
      await raise();
      for (let step = 0; step < 2; step++) {
        const record = await saver.getInterrupt(fresh.id);
        const due = record && dueStep(record);
        if (!record || !due || due.kind === "timeout") throw new Error("no ladder step due");
        expect(await saver.takeLadderStep(ladderStepWrite(record, due, now))).toBe(true);
        // The same step again (another timer, late): not taken.
        expect(await saver.takeLadderStep(ladderStepWrite(record, due, now))).toBe(false);
      }
      await raise();
      const after = await saver.getInterrupt(fresh.id);
      expect(after?.stage).toBe("escalated");
      expect(after?.deadline).toBe(ladder?.timeoutAt);
      expect(after?.policy?.groups).toEqual(["support", "managers"]);
      expect(after?.ladder).toEqual(ladder);
      expect(after?.status).toBe("pending");
    },
  );
}

/** A subscription to every ladder event of every tenant. */
function makeLadderSubscription() {
  return {
    id: `wh_ladder_${Math.random().toString(36).slice(2, 8)}`,
    tenant: null,
    url: "http://127.0.0.1:9/ladder",
    events: [
      "interrupt.pending" as const,
      "interrupt.reminded" as const,
      "interrupt.escalated" as const,
      "interrupt.answered" as const,
      "interrupt.expired" as const,
    ],
    graphs: [],
    createdAt: new Date().toISOString(),
    createdBy: "admin",
    previousSecretUntil: null,
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    previousSecret: null,
  };
}
