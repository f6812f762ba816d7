/**
 * Crash-safety scenarios run in child processes: a process is killed with SIGKILL in the middle of
 * a superstep, and a fresh process opening the same store must finish the run without losing a
 * committed step or re-running a finished task; two processes answering one interrupt at once
 * must leave exactly one answer.
 *
 * A backend provides a tiny worker script that opens its store and calls {@link crashWorkerMain};
 * its test file drives workers with {@link runCrashScenario} and {@link runAnswerRace}.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { expect, vi } from "vitest";
import {
  append,
  Command,
  lastValue,
  ReinError,
  START,
  StateGraph,
  type Checkpointer,
} from "../../index.ts";

/** Lease short enough that a fresh process takes over a killed one's thread quickly. */
const LEASE = { ttlMs: 800, waitMs: 20_000 };

function mark(file: string, line: string): void {
  appendFileSync(file, `${line}\n`);
}

function marks(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

/** The graph of the crash scenario: two fast tasks and a slow one in one step, then a final node. */
export function crashGraph(saver: Checkpointer, marksFile: string, hang: boolean) {
  return new StateGraph({ log: append<string>(), answer: lastValue<string>() })
    .addNode("fan", () => {
      mark(marksFile, "fan");
      return {};
    })
    .addNode("fast1", () => {
      mark(marksFile, "fast1");
      return { log: "fast1" };
    })
    .addNode("fast2", () => {
      mark(marksFile, "fast2");
      return { log: "fast2" };
    })
    .addNode("slow", async () => {
      mark(marksFile, "slow");
      if (hang) {
        // Long enough for the fast tasks' writes to be stored, then wait to be killed.
        await sleep(400);
        mark(marksFile, "ready-to-die");
        await sleep(60_000);
      }
      return { log: "slow" };
    })
    .addNode("ask", (_s, ctx) => {
      mark(marksFile, "ask");
      return { answer: ctx.interrupt<string>({ q: "who?" }) };
    })
    .addEdge(START, "fan")
    .addEdge("fan", "fast1")
    .addEdge("fan", "fast2")
    .addEdge("fan", "slow")
    .addEdge("slow", "ask")
    .compile({ checkpointer: saver, name: "crash", lease: LEASE });
}

/**
 * Entry point of a backend's worker script. argv: `<mode> <threadId> <marksFile> [answer]`;
 * modes: `start` (runs until killed), `continue` (finishes the run), `answer` (answers the pending
 * interrupt). Prints one JSON line with the outcome.
 */
export async function crashWorkerMain(saver: Checkpointer, argv: readonly string[]): Promise<void> {
  const [mode, threadId, marksFile, answer] = argv;
  if (!mode || !threadId || !marksFile)
    throw new Error("usage: <start|continue|answer> <threadId> <marksFile> [answer]");
  const graph = crashGraph(saver, marksFile, mode === "start");
  try {
    if (mode === "start") await graph.invoke({}, { threadId });
    else if (mode === "continue") {
      const result = await graph.invoke(null, { threadId });
      process.stdout.write(
        `${JSON.stringify({ ok: true, status: result.status, log: result.values.log })}\n`,
      );
    } else {
      const pending = await saver.getThreadInterrupts(threadId as never, "pending");
      // Both racers start answering at the same wall-clock moment.
      const at = Number(process.env.REIN_RACE_AT ?? "0");
      if (at > Date.now()) await sleep(at - Date.now());
      const result = await graph.invoke(Command.resumeMap({ [pending[0]?.id ?? "none"]: answer }), {
        threadId,
        actor: answer ?? "?",
      });
      process.stdout.write(
        `${JSON.stringify({ ok: true, status: result.status, answer: result.values.answer })}\n`,
      );
    }
  } catch (error) {
    process.stdout.write(
      `${JSON.stringify({ ok: false, code: ReinError.is(error) ? error.code : "unknown", message: String(error) })}\n`,
    );
  } finally {
    await saver.close();
  }
}

/** How to start a backend's worker: the command and leading arguments. */
export interface WorkerCommand {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

function run(
  worker: WorkerCommand,
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; output: Promise<string> } {
  const child = spawn(worker.command, [...worker.args, ...args], {
    env: { ...process.env, ...worker.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const output = new Promise<string>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) =>
      signal === "SIGKILL" || code === 0
        ? resolve(out)
        : reject(new Error(`worker exited ${code}: ${err}`)),
    );
  });
  return { child, output };
}

function lastJson(output: string): Record<string, unknown> {
  const line = output.trim().split("\n").at(-1) ?? "{}";
  return JSON.parse(line) as Record<string, unknown>;
}

/**
 * Kills a worker with SIGKILL after two of three tasks of a step finished, then lets a fresh
 * worker finish the step: the finished tasks must not run again and nothing committed is lost.
 */
export async function runCrashScenario(
  worker: WorkerCommand,
  threadId: string,
  marksFile: string,
): Promise<void> {
  const first = run(worker, ["start", threadId, marksFile]);
  await vi.waitFor(
    () => {
      if (!marks(marksFile).includes("ready-to-die"))
        throw new Error(
          `worker never reached the middle of the step; marks: ${marks(marksFile).join(",")}`,
        );
    },
    { timeout: 60_000, interval: 25 },
  );
  first.child.kill("SIGKILL");
  await first.output;
  expect(marks(marksFile).sort()).toEqual(["fan", "fast1", "fast2", "ready-to-die", "slow"]);
  const second = lastJson(await run(worker, ["continue", threadId, marksFile]).output);
  expect(second).toMatchObject({ ok: true, status: "interrupted" });
  expect(second.log).toEqual(["fast1", "fast2", "slow"]);
  const counts = marks(marksFile).reduce<Record<string, number>>(
    (acc, m) => ({ ...acc, [m]: (acc[m] ?? 0) + 1 }),
    {},
  );
  // The committed first step and the two finished tasks did not run again; only `slow` did.
  expect(counts).toEqual({ fan: 1, fast1: 1, fast2: 1, slow: 2, "ready-to-die": 1, ask: 1 });
}

/** Two processes answer the same interrupt at the same moment: exactly one applies. */
export async function runAnswerRace(
  worker: WorkerCommand,
  threadId: string,
  marksFile: string,
): Promise<void> {
  const at = String(Date.now() + 1500);
  const racers = ["alice", "bob"].map((who) =>
    run(worker, ["answer", threadId, marksFile, who], { REIN_RACE_AT: at }),
  );
  const results = await Promise.all(racers.map(async (r) => lastJson(await r.output)));
  const winners = results.filter((r) => r.ok === true);
  const losers = results.filter((r) => r.ok === false);
  expect(winners).toHaveLength(1);
  expect(losers).toHaveLength(1);
  expect(losers[0]?.code).toBe("stale_target");
  expect(winners[0]).toMatchObject({ status: "done" });
  expect(["alice", "bob"]).toContain(winners[0]?.answer);
  expect(marks(marksFile).filter((m) => m === "ask")).toHaveLength(2);
}
