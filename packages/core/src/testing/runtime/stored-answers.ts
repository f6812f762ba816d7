/**
 * Contracts of SPEC's "a recorded answer is always applied" when the call that recorded it died
 * before continuing the run: the answer stays, the run waits `running`, and a retry of the same
 * answer continues it (once) instead of being refused as stale; a different answer is still
 * refused and changes nothing.
 */
import { expect, it } from "vitest";
import {
  Command,
  END,
  FencedOutError,
  lastValue,
  RunConfig,
  START,
  StaleTargetError,
  StateGraph,
  type Checkpointer,
} from "../../index.ts";
import { hookSaver } from "../process/hooks.ts";
import { Counter, rejection, threadName, type RuntimeEnv } from "./harness.ts";

/** An approval before an action; the action counts its executions. */
function approvalBeforeAction(store: Checkpointer, counter: Counter) {
  return new StateGraph({ answer: lastValue<string>(), acted: lastValue<boolean>() })
    .addNode("ask", (_s, ctx) => ({ answer: ctx.interrupt<string>({ question: "go?" }) }))
    .addNode("act", () => {
      counter.hit("act");
      return { acted: true };
    })
    .addEdge(START, "ask")
    .addEdge("ask", "act")
    .addEdge("act", END)
    .compile({
      checkpointer: store,
      name: "stored-answer",
      lease: { ttlMs: 30_000, waitMs: 5_000 },
    });
}

/**
 * `saver` seen through a view whose next commit, once armed, "dies": it throws as a process
 * that lost its lease would, so the answer before it is stored and nothing after it.
 */
function dyingAtCommit(saver: Checkpointer): { store: Checkpointer; dieAtNextCommit: () => void } {
  let armed = false;
  const store = hookSaver(saver, {
    before: {
      commitStep: (args) => {
        if (!armed) return;
        armed = false;
        const [commit] = args as [{ checkpoint: { threadId: string } }];
        throw new FencedOutError(commit.checkpoint.threadId, 1, 2);
      },
    },
  });
  return {
    store,
    dieAtNextCommit: () => {
      armed = true;
    },
  };
}

/** Registers the contracts. */
export function storedAnswerContracts(env: RuntimeEnv): void {
  it(
    "a retried answer whose first call died before continuing continues the run, once; another answer is refused",
    env.withStore(async (saver) => {
      const { store, dieAtNextCommit } = dyingAtCommit(saver);
      const counter = new Counter();
      const graph = approvalBeforeAction(store, counter);
      const threadId = threadName("stored-answer");
      const paused = await graph.invoke({}, { threadId });
      expect(paused.status).toBe("interrupted");
      const asked = paused.interrupts[0];
      if (!asked) throw new Error("no interrupt");
      dieAtNextCommit();
      const died = await rejection(graph.resume(RunConfig.thread(threadId), Command.resume("yes")));
      expect(died).toBeInstanceOf(FencedOutError);
      expect((await saver.getInterrupt(asked.id))?.status).toBe("answered");
      expect((await saver.getRun(paused.runId))?.status).toBe("running");
      const headBefore = (await saver.getCheckpoint(asked.threadId, ""))?.id;

      const other = await rejection(graph.resume(RunConfig.thread(threadId), Command.resume("no")));
      expect(other).toBeInstanceOf(StaleTargetError);
      expect((await saver.getCheckpoint(asked.threadId, ""))?.id).toBe(headBefore);
      expect((await saver.getInterrupt(asked.id))?.answer).toBe("yes");
      expect(counter.of("act")).toBe(0);

      const retried = await graph.resume(RunConfig.thread(threadId), Command.resume("yes"));
      expect(retried.status).toBe("done");
      expect(retried.values).toMatchObject({ answer: "yes", acted: true });
      expect(counter.of("act")).toBe(1);
      const byId = await graph
        .resume(RunConfig.thread(threadId), Command.resumeMap({ [asked.id]: "yes" }))
        .catch((error: unknown) => error);
      // Once continued, the same answer is a stale target again: the run is done.
      expect(byId).toBeInstanceOf(StaleTargetError);
      expect(counter.of("act")).toBe(1);
    }),
  );

  it(
    "a retried answer by id to a run left running continues it",
    env.withStore(async (saver) => {
      const { store, dieAtNextCommit } = dyingAtCommit(saver);
      const counter = new Counter();
      const graph = approvalBeforeAction(store, counter);
      const threadId = threadName("stored-answer-map");
      const paused = await graph.invoke({}, { threadId });
      const asked = paused.interrupts[0];
      if (!asked) throw new Error("no interrupt");
      dieAtNextCommit();
      const answer = Command.resumeMap({ [asked.id]: "yes" });
      expect(await rejection(graph.resume(RunConfig.thread(threadId), answer))).toBeInstanceOf(
        FencedOutError,
      );
      const retried = await graph.resume(RunConfig.thread(threadId), answer);
      expect(retried.status).toBe("done");
      expect(counter.of("act")).toBe(1);
    }),
  );

  it(
    "a different answer to a stored one names the stored answer and the waiting run; invoke(null) continues the run",
    env.withStore(async (saver) => {
      const { store, dieAtNextCommit } = dyingAtCommit(saver);
      const counter = new Counter();
      const graph = approvalBeforeAction(store, counter);
      const threadId = threadName("stored-answer-null");
      const paused = await graph.invoke({}, { threadId });
      const asked = paused.interrupts[0];
      if (!asked) throw new Error("no interrupt");
      dieAtNextCommit();
      await rejection(graph.resume(RunConfig.thread(threadId), Command.resume("yes")));

      const other = await rejection(graph.resume(RunConfig.thread(threadId), Command.resume("no")));
      expect(other).toBeInstanceOf(StaleTargetError);
      const refused = other as StaleTargetError;
      expect(refused.details).toMatchObject({
        waitingRunId: paused.runId,
        storedAnswers: [{ interruptId: asked.id, answer: "yes" }],
      });
      expect(refused.message).toContain(paused.runId);
      expect(refused.message).toContain(`interrupt ${asked.id} = "yes"`);
      expect(refused.message).toMatch(/invoke\(null\)/);

      const continued = await graph.invoke(null, { threadId });
      expect(continued.status).toBe("done");
      expect(continued.runId).toBe(paused.runId);
      expect(continued.values).toMatchObject({ answer: "yes", acted: true });
      expect(counter.of("act")).toBe(1);
    }),
  );
}
