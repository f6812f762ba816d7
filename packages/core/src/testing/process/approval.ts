/**
 * The graph of the fault scenarios and the worker that runs it in a child process.
 *
 * `prep` does a guarded side effect; `ask` asks one or two questions and charges once per
 * answer (`ctx.once`, keyed by `ctx.idempotencyKey`), so the ledger shows how many times each
 * answered step took effect. A worker runs a list of steps given as JSON in argv and reports each
 * outcome; hooks let it stop inside `ask` or kill itself right after an answer commits.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { append, lastValue } from "../../channels.ts";
import type { Checkpointer } from "../../checkpoint/types.ts";
import { Command } from "../../graph/command.ts";
import { START, StateGraph } from "../../api/state-graph.ts";
import type { RunOptions } from "../../graph/options.ts";
import type { TaskContext } from "../../graph/node.ts";
import type { RunResult } from "../../types.ts";
import { closeInput, describeFailure, report, waitForLine } from "./child.ts";
import { hookSaver, jitterSaver } from "./hooks.ts";
import { Ledger } from "./ledger.ts";

/** One thing a worker does, in order. */
export type WorkerStep =
  /** Plain input (a new run). `requestId` is the idempotency id of the call (issue 8). */
  | { op: "invoke"; input: Record<string, unknown>; requestId?: string }
  /** `invoke(null)`: continue the thread. */
  | { op: "continue" }
  /** `resume(Command.resume(answer, { requestId }))`. */
  | { op: "resume"; answer: string; requestId?: string }
  /** Report `{ event: "waiting", line }` and wait for that line on stdin. */
  | { op: "wait"; line: string };

/** What a fault worker is told in argv (one JSON argument). */
export interface ApprovalWorkerConfig {
  threadId: string;
  /** Ledger file of side effects. */
  ledger: string;
  /** How many questions `ask` asks (0: none, it only charges). */
  questions: 0 | 1 | 2;
  /** Lease ttl of the graph: short, so a stopped or killed owner is taken over quickly. */
  ttlMs: number;
  /** Lease wait: how long a call waits for a busy thread. */
  waitMs?: number;
  /** Inside `ask`, after the first charge: report `{ event: "hold" }` and wait for `go` on stdin. */
  holdAfterFirst?: boolean;
  /** Every lease release fails (after the run's writes committed), as a dropped connection would. */
  failLeaseRelease?: boolean;
  /** Wait a random 0..jitterMs before every store call (see `jitterSaver`). */
  jitterMs?: number;
  /** Right after the store reports an answer applied: report `answer-committed`, then SIGKILL. */
  killAfterAnswer?: boolean;
  steps: WorkerStep[];
}

/** The ledger record of one side effect. */
export interface EffectRecord {
  thread: string;
  label: string;
  key: string;
  value: unknown;
  pid: number;
}

/** The scenario graph on `saver`. `hold` is awaited inside `ask` after the first charge. */
export function approvalGraph(
  saver: Checkpointer,
  config: Pick<ApprovalWorkerConfig, "ledger" | "questions" | "ttlMs" | "waitMs">,
  hold: () => Promise<void> = () => Promise.resolve(),
) {
  const ledger = new Ledger(config.ledger);
  const charge = (ctx: TaskContext, label: string, value: unknown): Promise<string> =>
    ctx.once(label, () => {
      // The key is `rein:<thread>:<task>:<label>`: one stable key per (thread, task, label).
      const key = ctx.idempotencyKey(label);
      const thread = key.split(":")[1] ?? "";
      const record: EffectRecord = { thread, label, key, value, pid: process.pid };
      ledger.append({ ...record });
      return key;
    });
  return new StateGraph({
    note: lastValue<string>(),
    answers: append<string>(),
    log: append<string>(),
  })
    .addNode("prep", async (_s, ctx) => {
      await charge(ctx, "prep", null);
      return { log: "prep" };
    })
    .addNode("ask", async (_s, ctx) => {
      const answers: string[] = [];
      if (config.questions === 0) {
        await charge(ctx, "charge-1", "none");
        return { log: "ask" };
      }
      const first = ctx.interrupt<string>({ question: "approve the first charge?" });
      await charge(ctx, "charge-1", first);
      answers.push(first);
      await hold();
      if (config.questions === 2) {
        const second = ctx.interrupt<string>({ question: "approve the second charge?" });
        await charge(ctx, "charge-2", second);
        answers.push(second);
      }
      return { answers, log: "ask" };
    })
    .addEdge(START, "prep")
    .addEdge("prep", "ask")
    .compile({
      checkpointer: saver,
      name: "approval",
      lease: { ttlMs: config.ttlMs, waitMs: config.waitMs ?? 20_000 },
    });
}

function describeResult(result: RunResult): Record<string, unknown> {
  return {
    ok: true,
    status: result.status,
    runId: result.runId,
    checkpointId: result.checkpointId,
    values: result.values,
    pending: result.interrupts.map((i) => i.id),
    ...(result.error ? { error: result.error } : {}),
  };
}

/**
 * Entry point of a backend's fault worker: `argv[0]` is an {@link ApprovalWorkerConfig} as JSON.
 * Reports `{ event: "ready" }`, then `{ event: "result", op, ...outcome }` per step, then
 * `{ event: "closed" }`. Node errors never escape: every outcome is a report.
 */
export async function approvalWorkerMain(
  saver: Checkpointer,
  argv: readonly string[],
): Promise<void> {
  const config = JSON.parse(argv[0] ?? "{}") as ApprovalWorkerConfig;
  let base: Checkpointer = config.jitterMs ? jitterSaver(saver, config.jitterMs) : saver;
  if (config.failLeaseRelease)
    base = hookSaver(base, {
      before: {
        releaseLease: () => {
          throw new Error("connection lost while releasing the lease");
        },
      },
    });
  const jittered = base;
  const store = config.killAfterAnswer
    ? hookSaver(jittered, {
        after: {
          answerInterrupts: (outcome) => {
            if ((outcome as { ok?: boolean }).ok !== true) return;
            report({ event: "answer-committed" });
            process.kill(process.pid, "SIGKILL");
          },
        },
      })
    : jittered;
  const hold = config.holdAfterFirst
    ? async () => {
        report({ event: "hold" });
        await waitForLine("go");
        report({ event: "released" });
      }
    : undefined;
  const graph = approvalGraph(store, config, hold);
  report({ event: "ready", pid: process.pid });
  for (const step of config.steps) {
    if (step.op === "wait") {
      report({ event: "waiting", line: step.line });
      await waitForLine(step.line);
      continue;
    }
    try {
      let result: RunResult;
      if (step.op === "invoke") {
        // `requestId` on invoke is the idempotent-call option issue 8 asks for; a variable keeps
        // the call compiling while RunOptions does not name it yet.
        const options: RunOptions & { requestId?: string } = {
          threadId: config.threadId,
          ...(step.requestId !== undefined ? { requestId: step.requestId } : {}),
        };
        result = await graph.invoke(step.input, options);
      } else if (step.op === "continue") {
        result = await graph.invoke(null, { threadId: config.threadId });
      } else {
        result = await graph.resume(
          { threadId: config.threadId, actor: `worker-${process.pid}` },
          Command.resume(
            step.answer,
            step.requestId !== undefined ? { requestId: step.requestId } : {},
          ),
        );
      }
      report({ event: "result", op: step.op, ...describeResult(result) });
    } catch (error) {
      report({ event: "result", op: step.op, ...describeFailure(error) });
    }
  }
  closeInput();
  // Give a lease release or a late write a moment, as a real process exiting would.
  await sleep(10);
  await saver.close();
  report({ event: "closed" });
}
