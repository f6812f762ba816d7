/**
 * Scenario 2 — pause and resume round trip: a node asks a question with `interrupt()`, the call
 * returns; a second call answers it and the run completes. On each store: memory, a SQLite file
 * (WAL) and Postgres on 127.0.0.1.
 */
import {
  Annotation,
  Command as PeerCommand,
  END as PEER_END,
  interrupt as peerInterrupt,
  START as PEER_START,
  StateGraph as PeerGraph,
  type BaseCheckpointSaver,
} from "@langchain/langgraph";
import {
  Command,
  END,
  lastValue,
  RunConfig,
  START,
  StateGraph,
  type Checkpointer,
} from "@rein/core";
import { loadavg } from "node:os";
import { assertSameState } from "../harness/check.ts";
import { skipped, timing, type Cell, type ResultRow } from "../harness/result.ts";
import {
  bySize,
  roundsOf,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutput,
  type VariantCheck,
} from "../harness/scenario.ts";
import { peerInterrupts, peerThread } from "../harness/peer.ts";
import { countCommits, openFloor, type FloorStore } from "../harness/floor.ts";
import { formatNumber } from "../harness/report.ts";
import { storeFactory, useStore, type StoreKind, type Used } from "../harness/stores.ts";
import { nowMs, summarize, type Repetitions } from "../harness/stats.ts";

/** Final state of one approval round trip. */
export interface ApprovalState {
  n: number;
  answer: string;
}

/** One system's round trip on one thread: pause, then resume to completion. */
interface RoundTrip {
  pause(threadId: string): Promise<void>;
  resume(threadId: string): Promise<ApprovalState>;
}

/**
 * Rein's side of the round trip: `prepare` adds 1, `ask` pauses with a question (also the graph
 * the driver comparison runs, `bench/src/drivers.ts`).
 */
export function benchApprovalGraph(saver: Checkpointer) {
  return new StateGraph({
    n: lastValue<number>(() => 0),
    answer: lastValue<string>(() => ""),
  })
    .addNode("prepare", (s) => ({ n: s.n + 1 }))
    .addNode("ask", (s, ctx) => ({
      answer: ctx.interrupt<string>({ question: `approve ${s.n}?` }),
    }))
    .addEdge(START, "prepare")
    .addEdge("prepare", "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: saver });
}

function reinRoundTrip(saver: Checkpointer): RoundTrip {
  const graph = benchApprovalGraph(saver);
  return {
    async pause(threadId) {
      const r = await graph.invoke({ n: 1 }, { threadId });
      if (r.status !== "interrupted") throw new Error(`Rein: expected a pause, got ${r.status}`);
    },
    async resume(threadId) {
      const r = await graph.resume(RunConfig.thread(threadId), Command.resume("yes"));
      if (r.status !== "done") throw new Error(`Rein: expected done, got ${r.status}`);
      return { n: r.values.n, answer: r.values.answer };
    },
  };
}

const PeerState = Annotation.Root({ n: Annotation<number>(), answer: Annotation<string>() });

/** LangGraph.js's side of the round trip: the same two nodes (also profiled by pg-profile). */
export function peerApprovalGraph(saver: BaseCheckpointSaver) {
  return new PeerGraph(PeerState)
    .addNode("prepare", (s) => ({ n: s.n + 1 }))
    .addNode("ask", (s) => ({
      answer: peerInterrupt<{ question: string }, string>({ question: `approve ${s.n}?` }),
    }))
    .addEdge(PEER_START, "prepare")
    .addEdge("prepare", "ask")
    .addEdge("ask", PEER_END)
    .compile({ checkpointer: saver });
}

function peerRoundTrip(saver: BaseCheckpointSaver): RoundTrip {
  const graph = peerApprovalGraph(saver);
  return {
    async pause(threadId) {
      const r = await graph.invoke({ n: 1 }, peerThread(threadId));
      if (peerInterrupts(r).length !== 1) throw new Error("LangGraph.js: expected one interrupt");
    },
    async resume(threadId) {
      const r = await graph.invoke(new PeerCommand({ resume: "yes" }), peerThread(threadId));
      return { n: r.n, answer: r.answer };
    },
  };
}

/**
 * The floor of a round trip: the same two nodes as a minimal loop, committing as many
 * checkpoints as Rein does (`pauseCommits` while pausing, `resumeCommits` while resuming), each on
 * its own; the resume reads the newest checkpoint back first, as any resume must.
 */
function floorRoundTrip(floor: FloorStore, commits: { pause: number; resume: number }): RoundTrip {
  return {
    async pause(threadId) {
      let state: ApprovalState = { n: 1, answer: "" };
      for (let seq = 0; seq < commits.pause; seq++) {
        if (seq === 1) state = { ...state, n: state.n + 1 }; // prepare
        await floor.commit(threadId, seq, state);
      }
    },
    async resume(threadId) {
      let state = (await floor.latest(threadId)) as ApprovalState;
      for (let i = 0; i < commits.resume; i++) {
        if (i === 0) state = { ...state, answer: "yes" }; // ask, answered
        await floor.commit(threadId, commits.pause + i, state);
      }
      return state;
    },
  };
}

/** Samples of one system: pause, resume and their sum, per thread (ms). */
interface Samples {
  pause: number[];
  resume: number[];
  roundTrip: number[];
  final: ApprovalState | null;
}

async function measure(system: RoundTrip, reps: Repetitions, prefix: string): Promise<Samples> {
  const out: Samples = { pause: [], resume: [], roundTrip: [], final: null };
  for (let i = 0; i < reps.warmup + reps.reps; i++) {
    const threadId = `${prefix}-${i}`;
    const t0 = nowMs();
    await system.pause(threadId);
    const t1 = nowMs();
    out.final = await system.resume(threadId);
    const t2 = nowMs();
    if (i < reps.warmup) continue;
    out.pause.push(t1 - t0);
    out.resume.push(t2 - t1);
    out.roundTrip.push(t2 - t0);
  }
  return out;
}

const REPS: Record<"full" | "quick" | "tiny", Record<StoreKind, Repetitions>> = {
  full: {
    memory: { warmup: 50, reps: 500 },
    sqlite: { warmup: 30, reps: 300 },
    postgres: { warmup: 20, reps: 200 },
  },
  quick: {
    memory: { warmup: 5, reps: 30 },
    sqlite: { warmup: 5, reps: 20 },
    postgres: { warmup: 3, reps: 10 },
  },
  tiny: {
    memory: { warmup: 1, reps: 2 },
    sqlite: { warmup: 1, reps: 2 },
    postgres: { warmup: 1, reps: 2 },
  },
};

const METRICS = [
  ["roundTrip", "pause + resume round trip"],
  ["pause", "invoke until the interrupt"],
  ["resume", "resume to completion"],
] as const;

type Metric = (typeof METRICS)[number][0];
type System = "rein" | "peer" | "floor";

/** Checkpoints Rein commits while pausing and while resuming, counted on an unmeasured thread. */
async function reinCommits(
  stores: ReturnType<typeof storeFactory>,
): Promise<Used<{ pause: number; resume: number; calls: number; writes: number }>> {
  return useStore(
    () => stores.rein("pause_resume_count"),
    async (s) => {
      const counted = countCommits(s.saver);
      const system = reinRoundTrip(counted.saver);
      await system.pause("count");
      const pause = counted.count();
      await system.resume("count");
      const { calls, writes } = counted.calls();
      return { pause, resume: counted.count() - pause, calls, writes };
    },
  );
}

/** The system order of round `r`: reversed every other round. */
export function roundOrder(r: number): System[] {
  return r % 2 === 0 ? ["rein", "peer", "floor"] : ["floor", "peer", "rein"];
}

const fmt = (ms: number): string => formatNumber(ms);
const spread = (xs: number[]): string =>
  xs.length === 0 ? "—" : `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}×`;

async function runStore(
  ctx: ScenarioContext,
  kind: StoreKind,
): Promise<{ rows: ResultRow[]; check: VariantCheck | null; facts?: Record<string, number> }> {
  if (kind === "postgres" && !ctx.postgres.ok) {
    const cell = skipped(ctx.postgres.reason);
    return {
      rows: METRICS.map(([, metric]) => ({
        scenario: "pause-resume",
        variant: kind,
        metric,
        rein: cell,
        peer: cell,
        floor: cell,
      })),
      check: null,
    };
  }
  const reps = bySize(ctx, REPS)[kind];
  const rounds = roundsOf(ctx);
  const stores = storeFactory(ctx, kind);
  const commits = await reinCommits(stores);
  // Per system, one Samples per round (or the reason it was skipped).
  const results: Record<System, Used<Samples>[]> = { rein: [], peer: [], floor: [] };
  const loads: number[] = [];
  let floorCommits = 0;
  for (let r = 0; r < rounds; r++) {
    loads.push(loadavg()[0] ?? 0);
    for (const system of roundOrder(r)) {
      ctx.log(`pause-resume: ${kind}, round ${r + 1}/${rounds}, ${system}`);
      if (system === "rein")
        results.rein.push(
          await useStore(
            () => stores.rein("pause_resume"),
            (s) => measure(reinRoundTrip(s.saver), reps, "rein"),
          ),
        );
      else if (system === "peer")
        results.peer.push(
          await useStore(
            () => stores.peer("pause_resume"),
            (s) => measure(peerRoundTrip(s.saver), reps, "peer"),
          ),
        );
      else if (!commits.ok) results.floor.push(commits);
      else
        results.floor.push(
          await useStore(
            async () => {
              const floor = await openFloor(ctx, kind);
              return {
                saver: floor,
                logicalBytes: () => Promise.resolve(null),
                diskBytes: () => Promise.resolve(null),
                close: () => floor.close(),
              };
            },
            async (s) => {
              const out = await measure(floorRoundTrip(s.saver, commits.value), reps, "floor");
              floorCommits = s.saver.commits / (reps.warmup + reps.reps);
              return out;
            },
          ),
        );
    }
  }
  for (const system of ["rein", "peer", "floor"] as const)
    for (const used of results[system])
      if (used.ok)
        assertSameState(`pause-resume ${kind} ${system} expected`, used.value.final, {
          n: 2,
          answer: "yes",
        });
  const pooled = (system: System, key: Metric): Cell => {
    const used = results[system];
    const skippedOne = used.find((u) => !u.ok);
    if (skippedOne && !skippedOne.ok) return skippedOne.cell;
    return timing("ms", summarize(used.flatMap((u) => (u.ok ? u.value[key] : []))));
  };
  const medians = (system: System, key: Metric): number[] =>
    results[system].flatMap((u) => (u.ok ? [summarize(u.value[key]).median] : []));
  const commitNote = commits.ok
    ? `Rein commits ${commits.value.pause} checkpoints while pausing and ${commits.value.resume} while resuming; the floor commits as many. A round trip makes ${commits.value.calls} store calls, ${commits.value.writes} of them writes (on SQLite each write is its own transaction; on Postgres each call is a round trip)`
    : undefined;
  const note = (key: Metric): string | undefined => {
    if (rounds < 2) return key === "roundTrip" ? commitNote : undefined;
    const rein = medians("rein", key);
    const peer = medians("peer", key);
    const floor = medians("floor", key);
    const ratios = rein.flatMap((x, i) => (peer[i] === undefined ? [] : [peer[i] / x]));
    const overFloor = rein.flatMap((x, i) => (floor[i] === undefined ? [] : [x / floor[i]]));
    return (
      (key === "roundTrip" && commitNote ? `${commitNote}. ` : "") +
      `${rounds} rounds (order reversed every other round), medians in ms: Rein ${rein.map(fmt).join(" / ")}, ` +
      `LangGraph.js ${peer.map(fmt).join(" / ")}, floor ${floor.map(fmt).join(" / ")}; ` +
      `LangGraph.js / Rein ${spread(ratios)}, Rein ÷ floor ${spread(overFloor)}; ` +
      `1-min load average at each round's start ${loads.map((l) => l.toFixed(2)).join(" / ")}`
    );
  };
  const rows: ResultRow[] = METRICS.map(([key, metric]) => {
    const n = note(key);
    return {
      scenario: "pause-resume",
      variant: kind,
      metric: `${metric} (${reps.reps} threads${rounds > 1 ? ` × ${rounds} rounds` : ""})`,
      rein: pooled("rein", key),
      peer: pooled("peer", key),
      floor: pooled("floor", key),
      ...(n ? { note: n } : {}),
    };
  });
  const rein = results.rein.at(-1);
  const peer = results.peer.at(-1);
  const check =
    rein?.ok && peer?.ok && commits.ok
      ? {
          variant: kind,
          rein: rein.value.final,
          peer: peer.value.final,
          counters: {
            threads: reps.warmup + reps.reps,
            rounds: results.rein.length,
            reinPauseCommits: commits.value.pause,
            reinResumeCommits: commits.value.resume,
            floorCommitsPerThread: floorCommits,
          },
        }
      : null;
  const facts = commits.ok
    ? {
        [`store calls per round trip, ${kind}`]: commits.value.calls,
        [`store writes per round trip, ${kind}`]: commits.value.writes,
      }
    : undefined;
  return { rows, check, ...(facts ? { facts } : {}) };
}

async function run(ctx: ScenarioContext): Promise<ScenarioOutput> {
  const rows: ResultRow[] = [];
  const checks: VariantCheck[] = [];
  const facts: Record<string, number> = {};
  for (const kind of ["memory", "sqlite", "postgres"] as const) {
    const out = await runStore(ctx, kind);
    rows.push(...out.rows);
    if (out.check) checks.push(out.check);
    Object.assign(facts, out.facts);
  }
  return { rows, checks, facts };
}

/** Scenario 2: pause + resume round trip on memory, SQLite and Postgres. */
export const pauseResume: Scenario = {
  name: "pause-resume",
  title: "2. Pause + resume round trip",
  description:
    "Two nodes: `prepare` adds 1 to a number, `ask` calls `interrupt()` and stores the answer. Each round trip uses a fresh thread: " +
    "`invoke` runs until the interrupt and returns; a second call (`resume(Command.resume(v))` / `invoke(new Command({ resume: v }))`) " +
    "completes the run. Memory, a SQLite file in WAL mode (both with `synchronous=NORMAL`), and Postgres on 127.0.0.1 (a fresh database per store and round). " +
    "The floor commits as many checkpoints as Rein does for the same round trip (counted on an unmeasured thread), each one small INSERT committed on its own, and reads the newest one back before resuming. " +
    "A full run measures three rounds, Rein, LangGraph.js, floor in the first and third and the reverse in the second; the note under each row gives every round.",
  run,
};
