/**
 * Contracts of SPEC §6 "one writer per thread": a process that lost its lease writes nothing, a
 * recorded answer is never lost to new input, retries with a request id apply once, and runs left
 * running by a dead process are found and finished. Process death and pauses are simulated with
 * a store view that stops answering (the real-process versions live in the stores' crash tests).
 */
import { it, expect } from "vitest";
import {
  append,
  Command,
  END,
  ErrorCodes,
  FencedOutError,
  lastValue,
  ReinError,
  RunConfig,
  RunInProgressError,
  START,
  StateGraph,
  ThreadInterruptedError,
  type Checkpointer,
} from "../../index.ts";
import { Counter, threadName, rejection, type RuntimeEnv } from "./harness.ts";

/** Lease takeovers wait out a TTL several times per contract. */
const TIMEOUT_MS = 20_000;

/** A short lease, so that takeovers happen within a test. */
const TTL = 300;

/** An error that stands for the process dying at that point. */
class SimulatedDeath extends Error {}

/**
 * A view of `store` whose methods can be replaced, and which can be "killed": once dead, every
 * call throws, as nothing runs in a dead process.
 */
function controllable(store: Checkpointer) {
  const overrides: { -readonly [K in keyof Checkpointer]?: Checkpointer[K] } = {};
  let dead = false;
  const view = new Proxy(store, {
    get(target, property): unknown {
      const own: unknown = Reflect.get(target, property, target);
      if (typeof own !== "function") return own;
      return (...args: unknown[]) => {
        if (dead) return Promise.reject(new SimulatedDeath("the process is dead"));
        const override = overrides[property as keyof Checkpointer] as
          ((...a: unknown[]) => unknown) | undefined;
        return override
          ? override(...args)
          : (own as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    view,
    overrides,
    kill(): void {
      dead = true;
    },
  };
}

/** prepare → approve (interrupt) → pay (a side effect behind ctx.once) → END. */
function refundGraph(
  store: Checkpointer,
  counter: Counter,
  ledger: string[],
  beforePay: () => Promise<void> = () => Promise.resolve(),
) {
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
    .addNode("pay", async (s, ctx) => {
      await beforePay();
      const receipt = await ctx.once("pay", () => {
        ledger.push(ctx.idempotencyKey("pay"));
        return `receipt-${ledger.length}`;
      });
      counter.hit("pay");
      return { log: `paid ${s.amount}: ${receipt}` };
    })
    .addEdge(START, "prepare")
    .addEdge("prepare", "approve")
    .addEdge("approve", "pay")
    .addEdge("pay", END)
    .compile({ checkpointer: store, name: "refund", lease: { ttlMs: TTL, waitMs: 5_000 } });
}

/** Waits `ms`, to let a lease expire. */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Contracts of fenced writes and of answers and retries that nothing can lose. */
export function writerContracts(env: RuntimeEnv): void {
  it(
    "a paused owner that wakes after another process finished the run writes nothing",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const ledger: string[] = [];
      const threadId = threadName("paused-owner");
      const a = controllable(saver);
      let wake!: () => void;
      let pausedInsidePay!: () => void;
      const insidePay = new Promise<void>((resolve) => (pausedInsidePay = resolve));
      let gate: Promise<void> | null = new Promise<void>((resolve) => (wake = resolve));
      const graphA = refundGraph(a.view, counter, ledger, async () => {
        // Only process A's first execution of `pay` stops, as a GC or VM pause would.
        const held = gate;
        gate = null;
        if (held) {
          pausedInsidePay();
          await held;
        }
      });
      const graphB = refundGraph(saver, counter, ledger);
      const paused = await graphB.invoke({ amount: 50 }, { threadId });
      const [question] = paused.interrupts;
      // A answers and continues into `pay`, then stops: its lease renewals stop with it.
      a.overrides.renewLease = () => new Promise<never>(() => undefined);
      const answerA = rejection(
        graphA.resume(RunConfig.thread(threadId), Command.resume({ ok: true }, { actor: "a" })),
      );
      await insidePay;
      await sleep(TTL + 200);
      // B finds the run unfinished, takes the lease over and finishes it.
      const finished = await graphB.invoke(null, { threadId });
      expect(finished.status).toBe("done");
      wake();
      const errorA = await answerA;
      expect(ReinError.is(errorA) && errorA.code).toBe(ErrorCodes.FENCED_OUT);
      expect(errorA).toBeInstanceOf(FencedOutError);
      // Nothing A did after waking is visible: the answer stands, the run stays done.
      const row = await saver.getInterrupt(question?.id as never);
      expect(row?.status).toBe("answered");
      expect(row?.answer).toEqual({ ok: true });
      expect((await saver.getRun(finished.runId))?.status).toBe("done");
      expect((await graphB.listInterrupts({ status: "pending", threadId })).items).toEqual([]);
      expect((await graphB.getState({ threadId })).values.log).toEqual([
        "prepared",
        "approved",
        "paid 50: receipt-1",
      ]);
      expect(ledger).toHaveLength(1);
    }),
    TIMEOUT_MS,
  );

  it(
    "an answer whose continuation died is never lost: new input is refused, the next call continues it",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const ledger: string[] = [];
      const threadId = threadName("answer-then-death");
      const dying = controllable(saver);
      const graph = refundGraph(saver, counter, ledger);
      await graph.invoke({ amount: 70 }, { threadId });
      // The resuming process dies right after its answer commits, before it hears the outcome
      // (which may carry the continuation's first reads: nothing of the continuation runs).
      dying.overrides.answerInterrupts = async (batch) => {
        await saver.answerInterrupts(batch);
        dying.kill();
        throw new SimulatedDeath("died right after the answer committed");
      };
      const died = await rejection(
        refundGraph(dying.view, counter, ledger).resume(
          RunConfig.thread(threadId),
          Command.resume({ ok: true }),
        ),
      );
      expect(died).toBeInstanceOf(SimulatedDeath);
      await sleep(TTL + 100);
      const head = (await graph.getState({ threadId })).checkpointId;
      const refused = await rejection(graph.invoke({ amount: 999 }, { threadId }));
      expect(refused).toBeInstanceOf(RunInProgressError);
      expect(refused).not.toBeInstanceOf(ThreadInterruptedError);
      expect((await graph.getState({ threadId })).checkpointId).toBe(head);
      const continued = await graph.invoke(null, { threadId });
      expect(continued.status).toBe("done");
      expect(continued.values.amount).toBe(70);
      expect(continued.values.log).toEqual(["prepared", "approved", "paid 70: receipt-1"]);
      expect(counter.of("approve:after")).toBe(1);
      expect(ledger).toHaveLength(1);
    }),
    TIMEOUT_MS,
  );

  it(
    "concurrent retries of one invoke with a request id run once and all get the first result",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const ledger: string[] = [];
      const threadId = threadName("retries");
      const graph = refundGraph(saver, counter, ledger);
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          graph.invoke({ amount: 10 }, { threadId, requestId: `${threadId}:start` }),
        ),
      );
      for (const [i, result] of results.entries()) expect(result, `retry ${i}`).toEqual(results[0]);
      expect(results[0]?.status).toBe("interrupted");
      expect(counter.of("prepare")).toBe(1);
      expect(await saver.listRuns(results[0]?.threadId as never)).toHaveLength(1);
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          graph.resume(
            RunConfig.thread(threadId),
            Command.resume({ ok: true }, { requestId: `${threadId}:answer` }),
          ),
        ),
      );
      for (const [i, answer] of answers.entries())
        expect(answer, `answer ${i}`).toEqual(answers[0]);
      expect(answers[0]?.status).toBe("done");
      expect(counter.of("approve:after")).toBe(1);
      expect(ledger).toHaveLength(1);
    }),
    TIMEOUT_MS,
  );

  it(
    "a retry after a failed attempt continues the first attempt's run with the same idempotency keys",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const keys: string[] = [];
      const threadId = threadName("retry-after-crash");
      const flaky = controllable(saver);
      const build = (store: Checkpointer) =>
        new StateGraph({ log: append<string>() })
          .addNode("charge", (_s, ctx) => {
            keys.push(ctx.idempotencyKey("charge"));
            counter.hit("charge");
            return { log: "charged" };
          })
          .addNode("notify", () => ({ log: "notified" }))
          .addEdge(START, "charge")
          .addEdge("charge", "notify")
          .addEdge("notify", END)
          .compile({ checkpointer: store, name: "charge", lease: { ttlMs: TTL } });
      // The first attempt dies when it commits `charge`'s step (after the charge was made).
      let commits = 0;
      flaky.overrides.commitStep = (commit) => {
        if (++commits === 2) {
          flaky.kill();
          return Promise.reject(new SimulatedDeath("died at commit"));
        }
        return saver.commitStep(commit);
      };
      const requestId = `${threadId}:charge`;
      const first = await rejection(build(flaky.view).invoke({}, { threadId, requestId }));
      expect(first).toBeInstanceOf(SimulatedDeath);
      await sleep(TTL + 100);
      const retried = await build(saver).invoke({}, { threadId, requestId });
      expect(retried.status).toBe("done");
      expect(retried.values.log).toEqual(["charged", "notified"]);
      expect(await saver.listRuns(retried.threadId)).toHaveLength(1);
      expect(keys).toHaveLength(2);
      expect(keys[1]).toBe(keys[0]);
      const again = await build(saver).invoke({}, { threadId, requestId });
      expect(again).toEqual(retried);
      expect(counter.of("charge")).toBe(2);
    }),
    TIMEOUT_MS,
  );

  it(
    "a lease release that fails after the work committed does not replace the result",
    env.withStore(async (saver) => {
      const flaky = controllable(saver);
      flaky.overrides.releaseLease = () => Promise.reject(new Error("store went away"));
      const threadId = threadName("release");
      const result = await refundGraph(flaky.view, new Counter(), []).invoke(
        { amount: 1 },
        { threadId },
      );
      expect(result.status).toBe("interrupted");
      expect(result.interrupts).toHaveLength(1);
    }),
    TIMEOUT_MS,
  );

  it(
    "a refused lease renewal aborts ctx.signal and the run records nothing more",
    env.withStore(async (saver) => {
      const threadId = threadName("renewal");
      const flaky = controllable(saver);
      flaky.overrides.renewLease = () => Promise.resolve(false);
      let sawAbort = false;
      const graph = new StateGraph({ log: append<string>() })
        .addNode("slow", async (_s, ctx) => {
          await new Promise<void>((resolve) => {
            ctx.signal.addEventListener("abort", () => resolve());
            setTimeout(resolve, 5_000);
          });
          sawAbort = ctx.signal.aborted;
          return { log: "slow" };
        })
        .addEdge(START, "slow")
        .addEdge("slow", END)
        .compile({ checkpointer: flaky.view, name: "slow", lease: { ttlMs: TTL } });
      const error = await rejection(graph.invoke({}, { threadId }));
      expect(sawAbort).toBe(true);
      expect(error).toBeInstanceOf(FencedOutError);
      const [run] = await saver.listRuns(threadId as never);
      // Not "cancelled": the run is unfinished and the next owner continues it.
      expect(run?.status).toBe("running");
    }),
    TIMEOUT_MS,
  );

  it(
    "runs left running by a dead process are found by status and finished by the recovery sweep",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const ledger: string[] = [];
      const threadId = threadName("sweep");
      const dying = controllable(saver);
      const graph = refundGraph(saver, counter, ledger);
      await graph.invoke({ amount: 5 }, { threadId });
      const die = (): Promise<never> => {
        dying.kill();
        return Promise.reject(new SimulatedDeath("died mid-step"));
      };
      dying.overrides.putTaskOutcome = die;
      dying.overrides.commitStep = die;
      await rejection(
        refundGraph(dying.view, counter, ledger).resume(
          RunConfig.thread(threadId),
          Command.resume({ ok: true }),
        ),
      );
      const stuck = await saver.listRunsByStatus({ status: "running", rootOnly: true });
      expect(stuck.items.map((r) => r.threadId)).toContain(threadId);
      // While the dead process's lease is unexpired, the sweep leaves the run alone.
      const early = await graph.recoverRuns();
      expect(early.recovered).not.toContain(stuck.items[0]?.runId);
      await sleep(TTL + 100);
      const swept = await graph.recoverRuns();
      expect(swept.recovered).toHaveLength(1);
      const state = await graph.getState({ threadId });
      expect(state.values.log).toEqual(["prepared", "approved", "paid 5: receipt-1"]);
      expect(ledger).toHaveLength(1);
      const after = await saver.listRunsByStatus({ status: "running", rootOnly: true });
      expect(after.items.map((r) => r.threadId)).not.toContain(threadId);
    }),
    TIMEOUT_MS,
  );
}
