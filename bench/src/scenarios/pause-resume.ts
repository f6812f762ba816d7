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
import { assertSameState } from "../harness/check.ts";
import { skipped, timing, type Cell, type ResultRow } from "../harness/result.ts";
import {
  bySize,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutput,
  type VariantCheck,
} from "../harness/scenario.ts";
import { peerInterrupts, peerThread } from "../harness/peer.ts";
import { storeFactory, useStore, type StoreKind } from "../harness/stores.ts";
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

function reinRoundTrip(saver: Checkpointer): RoundTrip {
  const graph = new StateGraph({
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

function peerRoundTrip(saver: BaseCheckpointSaver): RoundTrip {
  const graph = new PeerGraph(PeerState)
    .addNode("prepare", (s) => ({ n: s.n + 1 }))
    .addNode("ask", (s) => ({
      answer: peerInterrupt<{ question: string }, string>({ question: `approve ${s.n}?` }),
    }))
    .addEdge(PEER_START, "prepare")
    .addEdge("prepare", "ask")
    .addEdge("ask", PEER_END)
    .compile({ checkpointer: saver });
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

async function runStore(
  ctx: ScenarioContext,
  kind: StoreKind,
): Promise<{ rows: ResultRow[]; check: VariantCheck | null }> {
  if (kind === "postgres" && !ctx.postgres.ok) {
    const cell = skipped(ctx.postgres.reason);
    return {
      rows: METRICS.map(([, metric]) => ({
        scenario: "pause-resume",
        variant: kind,
        metric,
        rein: cell,
        peer: cell,
      })),
      check: null,
    };
  }
  ctx.log(`pause-resume: ${kind}`);
  const reps = bySize(ctx, REPS)[kind];
  const stores = storeFactory(ctx, kind);
  const rein = await useStore(
    () => stores.rein("pause_resume"),
    (s) => measure(reinRoundTrip(s.saver), reps, "rein"),
  );
  const peer = await useStore(
    () => stores.peer("pause_resume"),
    (s) => measure(peerRoundTrip(s.saver), reps, "peer"),
  );
  if (rein.ok)
    assertSameState(`pause-resume ${kind} expected`, rein.value.final, { n: 2, answer: "yes" });
  if (peer.ok)
    assertSameState(`pause-resume ${kind} expected`, peer.value.final, { n: 2, answer: "yes" });
  const cell = (used: typeof rein, key: (typeof METRICS)[number][0]): Cell =>
    used.ok ? timing("ms", summarize(used.value[key])) : used.cell;
  const rows = METRICS.map(([key, metric]) => ({
    scenario: "pause-resume",
    variant: kind,
    metric: `${metric} (${reps.reps} threads)`,
    rein: cell(rein, key),
    peer: cell(peer, key),
  }));
  const check =
    rein.ok && peer.ok
      ? {
          variant: kind,
          rein: rein.value.final,
          peer: peer.value.final,
          counters: { threads: reps.warmup + reps.reps },
        }
      : null;
  return { rows, check };
}

async function run(ctx: ScenarioContext): Promise<ScenarioOutput> {
  const rows: ResultRow[] = [];
  const checks: VariantCheck[] = [];
  for (const kind of ["memory", "sqlite", "postgres"] as const) {
    const out = await runStore(ctx, kind);
    rows.push(...out.rows);
    if (out.check) checks.push(out.check);
  }
  return { rows, checks };
}

/** Scenario 2: pause + resume round trip on memory, SQLite and Postgres. */
export const pauseResume: Scenario = {
  name: "pause-resume",
  title: "2. Pause + resume round trip",
  description:
    "Two nodes: `prepare` adds 1 to a number, `ask` calls `interrupt()` and stores the answer. Each round trip uses a fresh thread: " +
    "`invoke` runs until the interrupt and returns; a second call (`resume(Command.resume(v))` / `invoke(new Command({ resume: v }))`) " +
    "completes the run. Memory, a SQLite file in WAL mode (both with `synchronous=NORMAL`), and Postgres on 127.0.0.1 (a fresh database per store).",
  run,
};
