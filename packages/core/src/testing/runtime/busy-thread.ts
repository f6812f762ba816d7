/**
 * Contracts of SPEC's one-writer rule for a live run: input to a thread whose lease a live call
 * holds waits for that call, and past the wait is refused with `ThreadBusyError` without running
 * any node code or changing the thread.
 */
import { expect, it, vi } from "vitest";
import {
  append,
  type Checkpointer,
  Command,
  END,
  FencedOutError,
  START,
  StateGraph,
  ThreadBusyError,
  validateThreadId,
} from "../../index.ts";
import { hookSaver } from "../process/hooks.ts";
import { approvalGraph } from "./graphs.ts";
import { Counter, rejection, threadName, type RuntimeEnv } from "./harness.ts";

/** A one-node graph whose node waits for `gate` and logs its input's `tag`. */
function gatedGraph(
  saver: Checkpointer,
  log: string[],
  gate: Promise<void>,
  waitMs: number,
  ttlMs = 30_000,
) {
  return new StateGraph({ tags: append<string>() })
    .addNode("work", async (state: { tags: string[] }) => {
      const tag = state.tags.at(-1) ?? "?";
      log.push(`start ${tag}`);
      if (tag === "first") await gate;
      log.push(`end ${tag}`);
      return {};
    })
    .addEdge(START, "work")
    .addEdge("work", END)
    .compile({ checkpointer: saver, name: "gated", lease: { waitMs, ttlMs } });
}

/** A closed gate and the log the gated nodes write: `open()` lets the waiting node finish. */
function gateAndLog(): { log: string[]; gate: Promise<void>; open: () => void } {
  let open!: () => void;
  const gate = new Promise<void>((done) => (open = done));
  return { log: [], gate, open };
}

/** `saver` seen through a view that counts the times it is asked for a lease (either method). */
function countingAcquires(saver: Checkpointer): { store: Checkpointer; count(): number } {
  let acquires = 0;
  const counted = () => void (acquires += 1);
  const store = hookSaver(saver, {
    before: { acquireLease: counted, acquireLeaseAndRead: counted },
  });
  return { store, count: () => acquires };
}

/**
 * Resolves once `log` holds `entry` (node code runs in this process, so polling is cheap); the
 * test's own timeout bounds the wait.
 */
async function until(log: string[], entry: string): Promise<void> {
  await vi.waitFor(
    () => {
      if (!log.includes(entry)) throw new Error(`no "${entry}" in ${JSON.stringify(log)}`);
    },
    { timeout: 30_000, interval: 2 },
  );
}

/** Contracts of input that meets a live run of the same thread. */
export function busyThreadContracts(env: RuntimeEnv): void {
  it(
    "input while a live call holds the thread is refused with ThreadBusyError after the wait, and runs nothing",
    env.withStore(async (saver) => {
      const threadId = threadName("busy");
      const { log, gate, open } = gateAndLog();
      // Two graph objects, as two processes would build them, sharing one store.
      const first = gatedGraph(saver, log, gate, 30_000);
      const second = gatedGraph(saver, log, gate, 50);
      const running = first.invoke({ tags: ["first"] }, { threadId });
      await until(log, "start first");
      const refused = await second.invoke({ tags: ["second"] }, { threadId }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(ThreadBusyError);
      expect((refused as ThreadBusyError).code).toBe("thread_busy");
      // The refused input ran no node and wrote nothing: the live run's state is all there is.
      expect(log).toEqual(["start first"]);
      open();
      const done = await running;
      expect(done.status).toBe("done");
      expect(done.values.tags).toEqual(["first"]);
      expect((await first.getState({ threadId })).values.tags).toEqual(["first"]);
      expect(log).toEqual(["start first", "end first"]);
    }),
  );

  it(
    "input that arrives while a live call holds the thread waits for it, then runs after it",
    env.withStore(async (saver) => {
      const threadId = threadName("wait");
      const { log, gate, open } = gateAndLog();
      const first = gatedGraph(saver, log, gate, 30_000);
      const second = gatedGraph(saver, log, gate, 30_000);
      const running = first.invoke({ tags: ["first"] }, { threadId });
      await until(log, "start first");
      const waiting = second.invoke({ tags: ["second"] }, { threadId });
      // Give the waiting call time to try the lease; it must not start while the first runs.
      await new Promise((done) => setTimeout(done, 30));
      expect(log).toEqual(["start first"]);
      open();
      const [a, b] = await Promise.all([running, waiting]);
      expect(a.status).toBe("done");
      expect(b.status).toBe("done");
      // Serialized: the second call's node started only after the first call's node ended, and
      // its run continued from the first run's state.
      expect(log).toEqual(["start first", "end first", "start second", "end second"]);
      expect(b.values.tags).toEqual(["first", "second"]);
      expect(b.runId).not.toBe(a.runId);
    }),
  );

  it(
    "a call leaves the thread's lease free when it returns, paused or done, with or without a request id",
    env.withStore(async (saver) => {
      const threadId = threadName("lease-free");
      const thread = validateThreadId(threadId);
      const graph = approvalGraph(saver, new Counter());
      const paused = await graph.invoke({ amount: 5 }, { threadId });
      expect(paused.status).toBe("interrupted");
      // The lease ended with the call's last write: another owner may take the thread at once.
      expect(await saver.getLease(thread)).toBeUndefined();
      const done = await graph.resume(
        { threadId, requestId: "answer-1" },
        Command.resume({ ok: true }),
      );
      expect(done.status).toBe("done");
      expect(await saver.getLease(thread)).toBeUndefined();
      const again = await graph.invoke({ amount: 7 }, { threadId, requestId: "second-run" });
      expect(again.status).toBe("interrupted");
      expect(await saver.getLease(thread)).toBeUndefined();
      expect(await saver.acquireLease(thread, "another-process", 1_000)).toBeTypeOf("number");
    }),
  );

  it(
    "calls of one process that wait for a thread are handed its lease in turn: one store acquire for all, run in arrival order",
    env.withStore(async (saver) => {
      const threadId = threadName("handover");
      const { log, gate, open } = gateAndLog();
      const acquires = countingAcquires(saver);
      const graph = gatedGraph(acquires.store, log, gate, 30_000);
      const running = graph.invoke({ tags: ["first"] }, { threadId });
      await until(log, "start first");
      const waiting = ["second", "third", "fourth"].map((tag) =>
        graph.invoke({ tags: [tag] }, { threadId }),
      );
      await new Promise((done) => setTimeout(done, 20));
      expect(log).toEqual(["start first"]);
      open();
      const results = await Promise.all([running, ...waiting]);
      expect(results.map((r) => r.status)).toEqual(["done", "done", "done", "done"]);
      // Serialized in arrival order, each run continuing from the one before it.
      expect(log).toEqual([
        "start first",
        "end first",
        "start second",
        "end second",
        "start third",
        "end third",
        "start fourth",
        "end fourth",
      ]);
      expect(results[3]?.values.tags).toEqual(["first", "second", "third", "fourth"]);
      // The lease went from call to call inside the process: the store was asked for it once,
      // and the last call left it free.
      expect(acquires.count()).toBe(1);
      expect(await saver.getLease(validateThreadId(threadId))).toBeUndefined();
    }),
  );

  it(
    "a lease a call lost is not handed on: the waiting call takes a new one from the store, and the losing call writes nothing more",
    env.withStore(async (saver) => {
      const threadId = threadName("lost-handover");
      const { log, gate, open } = gateAndLog();
      const acquires = countingAcquires(saver);
      // A 600 ms lease, renewed every 200 ms: short, yet a loaded machine's event-loop stalls
      // do not lose it (a 150 ms lease did, now and then, on CI).
      const graph = gatedGraph(acquires.store, log, gate, 30_000, 600);
      const running = graph.invoke({ tags: ["first"] }, { threadId });
      await until(log, "start first");
      // What a new owner does after a loss: continue the thread's unfinished run.
      const waiting = graph.invoke(null, { threadId });
      // The store refuses the first call's next renewal (as when another owner took the thread):
      // within a renewal period (200 ms here) the first call's lease is lost. Only that one is
      // refused: the waiting call may take its new lease before the pause below ends, and a
      // refused renewal of its own would lose that one too.
      const renew = saver.renewLease.bind(saver);
      saver.renewLease = () => {
        saver.renewLease = renew;
        return Promise.resolve(false);
      };
      await new Promise((done) => setTimeout(done, 450));
      saver.renewLease = renew;
      open();
      const lost = await rejection(running);
      expect(lost).toBeInstanceOf(FencedOutError);
      const continued = await waiting;
      expect(continued.status).toBe("done");
      // The first call's step was not recorded, so the continuation ran it again, under a lease
      // of its own.
      expect(continued.values.tags).toEqual(["first"]);
      expect(log).toEqual(["start first", "end first", "start first", "end first"]);
      expect(acquires.count()).toBe(2);
      expect(await saver.getLease(validateThreadId(threadId))).toBeUndefined();
    }),
  );
}
