/**
 * The bounded crash loop of issue 8: worker processes run many threads (a fan-out of three
 * parallel tasks with `ctx.once` side effects, then on every other thread a question that is
 * answered with a request id) and are SIGKILLed at random moments, hundreds of times. Each worker
 * appends every checkpoint it saw committed to a ledger before it can die, and every side effect
 * to another. Afterwards a clean pass finishes every thread and the store is checked against
 * both ledgers: committed steps lost, forked histories, duplicated task writes, side effects per
 * idempotency key, answers applied twice.
 */
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { append, lastValue } from "../../channels.ts";
import type { Checkpointer } from "../../checkpoint/types.ts";
import { Command, Send } from "../../graph/command.ts";
import { END, START, StateGraph } from "../../api/state-graph.ts";
import type { ThreadId } from "../../ids.ts";
import type { RunResult } from "../../types.ts";
import { describeFailure, report } from "./child.ts";
import { hookSaver } from "./hooks.ts";
import { Ledger } from "./ledger.ts";
import { WorkerProcess, type ProcessCommand } from "./worker.ts";

/** Lease of the loop's graph: short, so a killed worker's threads are taken over at once. */
const LOOP_LEASE = { ttlMs: 200, waitMs: 20_000 };

/** What a crash-loop worker is told in argv (one JSON argument). */
export interface CrashLoopWorkerConfig {
  /** Lanes the worker drives concurrently, so one kill lands in several runs at once. */
  lanes: CrashLoopLane[];
  /** Ledger of side effects. */
  effects: string;
  /** Ledger of checkpoints seen committed. */
  commits: string;
}

/** A sequence of threads `<slot>-<k>`, driven by one worker at a time. */
export interface CrashLoopLane {
  slot: number;
  /** First thread index to drive. */
  start: number;
  /** Last thread index to drive (inclusive); without it the lane goes on until killed. */
  end?: number;
}

/** Whether the loop's graph asks a question on thread `<slot>-<k>`: every other thread does. */
function asks(threadId: string): boolean {
  return Number(threadId.split("-").at(-1)) % 2 === 0;
}

/** Random pause inside node code, so kills land at many different points of a step. */
function jitter(): Promise<void> {
  return sleep(Math.floor(Math.random() * 12));
}

/** The crash loop's graph: plan → 3 × work (Send) → ask (question on even threads) → finish. */
export function crashLoopGraph(saver: Checkpointer, effects: Ledger) {
  const effect = (threadId: string, label: string, key: string, value: unknown): void =>
    effects.append({ thread: threadId, label, key, value, pid: process.pid });
  return new StateGraph({ log: append<string>(), answer: lastValue<string>() })
    .addNode("plan", async () => {
      await jitter();
      return { log: "plan" };
    })
    .addNode<{ i: number }>("work", async ({ i }, ctx) => {
      await jitter();
      await ctx.once("effect", async () => {
        effect(ctx.threadId, `work-${i}`, ctx.idempotencyKey("effect"), i);
        // A kill here, after the effect and before its result is stored, repeats the effect
        // with the same key: at least once, deduplicated by the key.
        await jitter();
        return i;
      });
      return { log: `w${i}` };
    })
    .addNode("ask", async (_s, ctx) => {
      await jitter();
      if (!asks(ctx.threadId)) return { log: "ask" };
      const answer = ctx.interrupt<string>({ question: "go on?" });
      await ctx.once("approve", () => {
        effect(ctx.threadId, "approve", ctx.idempotencyKey("approve"), answer);
        return answer;
      });
      return { answer, log: "ask" };
    })
    .addNode("finish", async () => {
      await jitter();
      return { log: "finish" };
    })
    .addEdge(START, "plan")
    .addConditionalEdges("plan", () => [0, 1, 2].map((i) => new Send("work", { i })), ["work"])
    .addEdge("work", "ask")
    .addEdge("ask", "finish")
    .addEdge("finish", END)
    .compile({ checkpointer: saver, name: "crash-loop", lease: LOOP_LEASE });
}

/** Log entries of a finished thread of the loop graph. */
const FINISHED_LOG = ["ask", "finish", "plan", "w0", "w1", "w2"];

/**
 * Entry point of a backend's crash-loop worker: `argv[0]` is a {@link CrashLoopWorkerConfig}.
 * Drives each lane's threads `<slot>-<start>`, `<slot>-<start+1>`... to `done`, reporting `begin`
 * and `done` per thread, until killed (or past every lane's `end`).
 */
export async function crashLoopWorkerMain(
  saver: Checkpointer,
  argv: readonly string[],
): Promise<void> {
  const config = JSON.parse(argv[0] ?? "{}") as CrashLoopWorkerConfig;
  const commits = new Ledger(config.commits);
  const store = hookSaver(saver, {
    after: {
      commitStep: (_result, [commit]) => {
        const checkpoint = (commit as { checkpoint: Record<string, unknown> }).checkpoint;
        commits.append({
          thread: checkpoint.threadId,
          stream: checkpoint.stream,
          id: checkpoint.id,
          parentId: checkpoint.parentId,
          step: checkpoint.step,
        });
      },
    },
  });
  const graph = crashLoopGraph(store, new Ledger(config.effects));
  // Connected before `ready`: the parent's random kill delay then spans work, not start-up.
  await saver.getThread("warm-up" as ThreadId);
  report({ event: "ready", pid: process.pid });
  await Promise.all(config.lanes.map((lane) => driveLane(saver, graph, lane)));
  await saver.close();
  report({ event: "closed" });
}

async function driveLane(
  saver: Checkpointer,
  graph: ReturnType<typeof crashLoopGraph>,
  lane: CrashLoopLane,
): Promise<void> {
  for (let k = lane.start; lane.end === undefined || k <= lane.end; k += 1) {
    const threadId = `${lane.slot}-${k}`;
    report({ event: "begin", slot: lane.slot, k });
    for (let attempt = 0; ; attempt += 1) {
      if (attempt > 50) throw new Error(`thread ${threadId} did not finish in 50 calls`);
      try {
        if (await driveOnce(saver, graph, threadId)) break;
      } catch (error) {
        report({ event: "error", threadId, ...describeFailure(error) });
        await sleep(20);
      }
    }
    report({ event: "done", slot: lane.slot, k });
  }
}

/** One call that moves a thread on; true when the thread is done. */
async function driveOnce(
  saver: Checkpointer,
  graph: ReturnType<typeof crashLoopGraph>,
  threadId: string,
): Promise<boolean> {
  const id = threadId as ThreadId;
  let result: RunResult;
  if (!(await saver.getThread(id))) {
    result = await graph.invoke({ log: "input" }, { threadId });
  } else if ((await saver.getThreadInterrupts(id, "pending")).length > 0) {
    result = await graph.resume(
      { threadId },
      Command.resume(`answer-${threadId}`, { requestId: `req-${threadId}` }),
    );
  } else {
    const head = await saver.getCheckpoint(id, "");
    if (head && head.next.length === 0 && (await saver.getRun(head.runId))?.status === "done")
      return true;
    result = await graph.invoke(null, { threadId });
  }
  if (result.status === "error") throw new Error(`run failed: ${JSON.stringify(result.error)}`);
  return result.status === "done";
}

/** Settings of {@link runCrashLoop}. */
export interface CrashLoopOptions {
  /** The backend's crash-loop worker. */
  worker: ProcessCommand;
  /** Scratch directory for the ledgers. */
  dir: string;
  /** Opens the store the workers use (closed by the loop). */
  open: () => Promise<Checkpointer>;
  /** Store name for the printed summary. */
  label: string;
  /** Workers alive at once. Default 3. */
  workers?: number;
  /** Lanes (threads driven concurrently) per worker. Default 4. */
  lanes?: number;
  /** Stop killing after this many kills. Default 300. */
  kills?: number;
  /** Stop killing after this long. Default 40 s. */
  budgetMs?: number;
  /** Longest a worker lives before it is killed. Default 400 ms. */
  maxLifeMs?: number;
}

/** What the crash loop counted. */
export interface CrashLoopCounts {
  kills: number;
  /** Runs (one per lane) that a kill cut in the middle: each kill lands in several. */
  runsCutByKills: number;
  threads: number;
  commitsSeen: number;
  committedStepsLost: number;
  forkedHistories: number;
  threadsNotDone: number;
  duplicatedTaskWrites: number;
  sideEffects: number;
  rawDuplicateEffects: number;
  effectsWithSeveralKeys: number;
  missingEffects: number;
  answersAppliedTwice: number;
  elapsedMs: number;
  /** Mean time from spawn to a worker's `ready` report. */
  meanStartupMs: number;
  /** Calls that failed in killed workers, by error code (a busy thread, a lost race...). */
  callErrors: Record<string, number>;
}

/**
 * Runs the crash loop, finishes every thread without kills, checks the store and both ledgers,
 * prints the counts (one line, for the closing note) and asserts the invariants.
 */
export async function runCrashLoop(options: CrashLoopOptions): Promise<CrashLoopCounts> {
  const began = Date.now();
  const workers = options.workers ?? 3;
  const lanes = options.lanes ?? 4;
  const slots = workers * lanes;
  const target = options.kills ?? 300;
  const budget = options.budgetMs ?? 40_000;
  const maxLife = options.maxLifeMs ?? 400;
  const effects = new Ledger(join(options.dir, `${options.label}-effects.ledger`));
  const commits = new Ledger(join(options.dir, `${options.label}-commits.ledger`));
  const next = Array.from({ length: slots }, () => 0);
  const last = Array.from({ length: slots }, () => -1);
  let kills = 0;
  let startupMs = 0;
  const slotsOf = (w: number): number[] => Array.from({ length: lanes }, (_, l) => w * lanes + l);
  const config = (w: number, clean: boolean): string =>
    JSON.stringify({
      lanes: slotsOf(w)
        .filter((slot) => !clean || (last[slot] ?? -1) >= (next[slot] ?? 0))
        .map((slot) => ({
          slot,
          start: next[slot] ?? 0,
          ...(clean ? { end: last[slot] ?? -1 } : {}),
        })),
      effects: effects.path,
      commits: commits.path,
    } satisfies CrashLoopWorkerConfig);
  const errors: Record<string, number> = {};
  let runsCut = 0;
  const learn = (worker: WorkerProcess): void => {
    // A lane that began a thread and did not report it done was cut mid-run by the kill.
    const open = new Map<number, number>();
    for (const r of worker.reports) {
      if (r.event === "begin") open.set(Number(r.slot), Number(r.k));
      if (r.event === "done") open.delete(Number(r.slot));
    }
    runsCut += open.size;
    for (const r of worker.events("error")) {
      const code = String(r.code ?? r.name);
      errors[code] = (errors[code] ?? 0) + 1;
    }
    for (const r of worker.events("done"))
      next[Number(r.slot)] = Math.max(next[Number(r.slot)] ?? 0, Number(r.k) + 1);
    for (const r of worker.events("begin"))
      last[Number(r.slot)] = Math.max(last[Number(r.slot)] ?? -1, Number(r.k));
  };

  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (kills < target && Date.now() - began < budget) {
        const spawned = Date.now();
        const worker = WorkerProcess.start(options.worker, [config(w, false)]);
        await worker.waitForEvent("ready", 30_000);
        startupMs += Date.now() - spawned;
        await sleep(Math.random() * maxLife);
        const exit = await worker.kill();
        if (exit.signal !== "SIGKILL")
          throw new Error(`crash-loop worker exited on its own (${exit.code}): ${exit.stderr}`);
        kills += 1;
        learn(worker);
      }
    }),
  );

  // The clean pass: every begun thread is driven to its end by a worker nobody kills.
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      const worker = WorkerProcess.start(options.worker, [config(w, true)]);
      const exit = await worker.exited;
      if (exit.code !== 0)
        throw new Error(
          `clean pass of worker ${w} failed (${exit.code ?? exit.signal}): ${exit.stderr}`,
        );
    }),
  );

  const counts = await check(options, slots, last, commits, effects, kills);
  counts.elapsedMs = Date.now() - began;
  counts.meanStartupMs = Math.round(startupMs / Math.max(1, kills));
  counts.callErrors = errors;
  counts.runsCutByKills = runsCut;
  console.log(`crash loop on ${options.label}: ${JSON.stringify(counts)}`);
  expect(counts.kills, "the loop killed workers").toBeGreaterThan(0);
  expect(counts.runsCutByKills, "kills landed in the middle of runs").toBeGreaterThan(0);
  expect(counts).toMatchObject({
    committedStepsLost: 0,
    forkedHistories: 0,
    threadsNotDone: 0,
    duplicatedTaskWrites: 0,
    effectsWithSeveralKeys: 0,
    missingEffects: 0,
    answersAppliedTwice: 0,
  });
  return counts;
}

async function check(
  options: CrashLoopOptions,
  slots: number,
  last: number[],
  commits: Ledger,
  effects: Ledger,
  kills: number,
): Promise<CrashLoopCounts> {
  const saver = await options.open();
  const counts: CrashLoopCounts = {
    kills,
    runsCutByKills: 0,
    threads: 0,
    commitsSeen: 0,
    committedStepsLost: 0,
    forkedHistories: 0,
    threadsNotDone: 0,
    duplicatedTaskWrites: 0,
    sideEffects: 0,
    rawDuplicateEffects: 0,
    effectsWithSeveralKeys: 0,
    missingEffects: 0,
    answersAppliedTwice: 0,
    elapsedMs: 0,
    meanStartupMs: 0,
    callErrors: {},
  };
  try {
    const seen = commits.read();
    counts.commitsSeen = seen.length;
    for (const c of seen) {
      const stored = await saver.getCheckpoint(
        c.thread as ThreadId,
        String(c.stream),
        c.id as never,
      );
      if (!stored) counts.committedStepsLost += 1;
    }
    const allEffects = effects.read();
    for (let slot = 0; slot < slots; slot += 1) {
      for (let k = 0; k <= (last[slot] ?? -1); k += 1) {
        const threadId = `${slot}-${k}`;
        const id = threadId as ThreadId;
        counts.threads += 1;
        const history = await saver.listCheckpoints(id, "");
        const children = new Map<string, number>();
        for (const c of history)
          if (c.parentId) children.set(c.parentId, (children.get(c.parentId) ?? 0) + 1);
        counts.forkedHistories += [...children.values()].filter((n) => n > 1).length;
        const head = history[0];
        const run = head ? await saver.getRun(head.runId) : undefined;
        if (!head || head.next.length > 0 || run?.status !== "done") counts.threadsNotDone += 1;
        if (head) {
          const values = await saver.getChannelValues(id, "", head.versions);
          const log = ((values.log as string[] | undefined) ?? []).filter((l) => l !== "input");
          if (JSON.stringify([...log].sort()) !== JSON.stringify(FINISHED_LOG))
            counts.duplicatedTaskWrites += Math.max(1, log.length - FINISHED_LOG.length);
        }
        const mine = allEffects.filter((e) => e.thread === threadId);
        const labels = ["work-0", "work-1", "work-2", ...(asks(threadId) ? ["approve"] : [])];
        for (const label of labels) {
          const entries = mine.filter((e) => e.label === label);
          const keys = new Set(entries.map((e) => String(e.key)));
          if (keys.size === 0) counts.missingEffects += 1;
          if (keys.size > 1) counts.effectsWithSeveralKeys += 1;
          counts.sideEffects += keys.size;
          counts.rawDuplicateEffects += entries.length - keys.size;
        }
        if (asks(threadId)) {
          const answers = (await saver.listAudit({ threadId: id })).items.filter(
            (a) => a.action === "answer",
          );
          if (answers.length > 1) counts.answersAppliedTwice += 1;
        }
      }
    }
  } finally {
    await saver.close();
  }
  return counts;
}
