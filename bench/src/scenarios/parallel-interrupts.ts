/**
 * Scenario 3 — answering K parallel interrupts one at a time. A node fans out K tasks with Send;
 * every task interrupts. A person answers them one by one, by interrupt id. Rein runs only the
 * answered task on each answer; LangGraph.js re-runs every still-paused sibling of the step.
 */
import { setMaxListeners } from "node:events";
import {
  Annotation,
  Command as PeerCommand,
  END as PEER_END,
  interrupt as peerInterrupt,
  MemorySaver as PeerMemorySaver,
  Send as PeerSend,
  START as PEER_START,
  StateGraph as PeerGraph,
} from "@langchain/langgraph";
import {
  append,
  Command,
  END,
  lastValue,
  MemorySaver,
  Send,
  START,
  StateGraph,
  type Serializer,
} from "@rein/core";
import { assertCount, assertSameState } from "../harness/check.ts";
import { DecodeCounter } from "../harness/decoding.ts";
import { estimate, timing, value, type ResultRow } from "../harness/result.ts";
import {
  bySize,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutput,
  type VariantCheck,
} from "../harness/scenario.ts";
import { peerInterrupts, peerThread } from "../harness/peer.ts";
import { allPending } from "../harness/pending.ts";
import { nowMs, summarize } from "../harness/stats.ts";
import {
  answerSchedule,
  estimateSequentialTotal,
  expectedPeerBodies,
  expectedReinBodies,
  pendingBefore,
  type AnswerGroup,
} from "./answer-schedule.ts";

/** Final state: the fanned-out items and the answers the tasks wrote (sorted). */
export interface FanState {
  items: number[];
  out: number[];
}

/** One system running the fan-out graph on one thread. */
interface FanSystem {
  /** Fans out `k` tasks that all pause; returns item → interrupt id of what the result lists. */
  start(k: number): Promise<Map<number, string>>;
  /** Item → interrupt id of every pending interrupt, when the result listed only a page. */
  listAll?(): Promise<Map<number, string>>;
  /** Answers the given interrupts (id → value) in one command; true when the run is done. */
  answer(answers: Record<string, number>): Promise<boolean>;
  /** State after the last call (answers sorted, since the append order follows task order). */
  final(): FanState;
  /** Executions of the worker node body so far. */
  bodies(): number;
}

/** The answer a person gives to the task of item `i`. */
const answerFor = (i: number): number => i * 10;
const itemsOf = (k: number): number[] => Array.from({ length: k }, (_, i) => i);
const sorted = (s: FanState): FanState => ({
  items: s.items,
  out: [...s.out].sort((a, b) => a - b),
});

function reinFan(threadId: string, serializer?: Serializer): FanSystem {
  let bodies = 0;
  let state: FanState = { items: [], out: [] };
  const graph = new StateGraph({ items: lastValue<number[]>(() => []), out: append<number>() })
    .addNode("fan", () => ({}))
    .addNode("work", (arg: { i: number }, ctx) => {
      bodies++;
      return { out: ctx.interrupt<number>({ i: arg.i }) };
    })
    .addEdge(START, "fan")
    .addConditionalEdges("fan", (s) => s.items.map((i) => new Send("work", { i })), ["work"])
    .addEdge("work", END)
    .compile({ checkpointer: new MemorySaver(serializer ? { serializer } : {}) });
  return {
    async start(k) {
      const r = await graph.invoke({ items: itemsOf(k) }, { threadId });
      state = r.values;
      return new Map(r.interrupts.map((it) => [(it.payload as { i: number }).i, it.id]));
    },
    async listAll() {
      const pending = await allPending(graph, threadId);
      return new Map(pending.map((it) => [(it.payload as { i: number }).i, it.id]));
    },
    async answer(answers) {
      const r = await graph.invoke(Command.resumeMap(answers), { threadId });
      state = r.values;
      return r.status === "done";
    },
    final: () => sorted(state),
    bodies: () => bodies,
  };
}

const PeerState = Annotation.Root({
  items: Annotation<number[]>(),
  out: Annotation<number[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

function peerFan(threadId: string): FanSystem {
  let bodies = 0;
  let state: FanState = { items: [], out: [] };
  const graph = new PeerGraph(PeerState)
    .addNode("fan", () => ({}))
    .addNode("work", (arg: { i: number }) => {
      bodies++;
      return { out: [peerInterrupt<{ i: number }, number>({ i: arg.i })] };
    })
    .addEdge(PEER_START, "fan")
    .addConditionalEdges("fan", (s) => s.items.map((i) => new PeerSend("work", { i })), ["work"])
    .addEdge("work", PEER_END)
    .compile({ checkpointer: new PeerMemorySaver() });
  const config = peerThread(threadId);
  return {
    async start(k) {
      const r = await graph.invoke({ items: itemsOf(k) }, config);
      state = { items: r.items, out: r.out };
      return new Map(
        peerInterrupts<{ i: number }>(r).map((it) => [it.value?.i ?? -1, it.id ?? ""]),
      );
    },
    async answer(answers) {
      const r = await graph.invoke(new PeerCommand({ resume: answers }), config);
      state = { items: r.items, out: r.out };
      return peerInterrupts(r).length === 0;
    },
    final: () => sorted(state),
    bodies: () => bodies,
  };
}

/** What driving one system through a schedule measured. */
interface Drive {
  startMs: number;
  /** Measured single answers: how many were pending before, and how long the answer took. */
  samples: { pending: number; ms: number }[];
  /** All answer commands, measured or not (ms). */
  totalMs: number;
  /** Node bodies run by the answers (after the first invoke). */
  reruns: number;
  bodies: number;
  final: FanState;
}

async function drive(
  system: FanSystem,
  k: number,
  groups: AnswerGroup[],
  label: string,
): Promise<Drive> {
  const t0 = nowMs();
  let ids = await system.start(k);
  const startMs = nowMs() - t0;
  // A run result lists the oldest page of pending interrupts; the rest come from the queue.
  if (ids.size < k && system.listAll) ids = await system.listAll();
  if (ids.size !== k) throw new Error(`${label}: expected ${k} interrupts, got ${ids.size}`);
  const firstBodies = system.bodies();
  const pending = pendingBefore(k, groups);
  const samples: Drive["samples"] = [];
  let totalMs = 0;
  let done = false;
  for (const [g, group] of groups.entries()) {
    const answers = Object.fromEntries(
      group.items.map((i) => [ids.get(i) as string, answerFor(i)]),
    );
    const start = nowMs();
    done = await system.answer(answers);
    const ms = nowMs() - start;
    totalMs += ms;
    if (group.measured) samples.push({ pending: pending[g] as number, ms });
  }
  if (!done) throw new Error(`${label}: the run is not done after answering all ${k} interrupts`);
  return {
    startMs,
    samples,
    totalMs,
    reruns: system.bodies() - firstBodies,
    bodies: system.bodies(),
    final: system.final(),
  };
}

/** K values and, for large K, the window size of the sampled schedule (null: every answer). */
const SIZES: Record<"full" | "quick" | "tiny", { k: number; window: number | null }[]> = {
  full: [
    { k: 10, window: null },
    { k: 100, window: null },
    { k: 1000, window: 10 },
  ],
  quick: [
    { k: 10, window: null },
    { k: 100, window: 5 },
  ],
  tiny: [
    { k: 1, window: null },
    { k: 3, window: null },
    { k: 7, window: null },
    { k: 12, window: 2 },
  ],
};

/** How many single answers {@link countDecoding} averages over. */
const DECODE_SAMPLE = 10;

/**
 * What Rein's store decodes per single answer at width `k`, on an unmeasured run: the cause
 * behind the per-answer time growing with K (see `targets.ts`).
 */
async function countDecoding(k: number): Promise<{ records: number; chars: number }> {
  const counter = new DecodeCounter();
  const system = reinFan(`rein-decode-${k}`, counter);
  const ids = [...(await system.start(k)).values()];
  const answers = Math.min(DECODE_SAMPLE, k - 1);
  counter.reset();
  for (const [n, id] of ids.slice(0, answers).entries())
    await system.answer({ [id]: answerFor(n) });
  return { records: counter.records / answers, chars: counter.chars / answers };
}

async function runK(
  ctx: ScenarioContext,
  k: number,
  window: number | null,
): Promise<{ rows: ResultRow[]; check: VariantCheck; facts: Record<string, number> }> {
  const variant = `K=${k}`;
  ctx.log(`parallel-interrupts: ${variant}`);
  const groups = answerSchedule(k, window);
  const windowed = groups.length < k;
  const rein = await drive(reinFan(`rein-${k}`), k, groups, `Rein ${variant}`);
  const peer = await drive(peerFan(`peer-${k}`), k, groups, `LangGraph.js ${variant}`);
  assertSameState(`parallel-interrupts ${variant}`, rein.final, peer.final);
  assertCount(`Rein node bodies, ${variant}`, rein.bodies, expectedReinBodies(k));
  assertCount(`LangGraph.js node bodies, ${variant}`, peer.bodies, expectedPeerBodies(k, groups));
  // Windowed: Rein's one-at-a-time total is cheap enough to measure whole; the peer's is fitted.
  const reinSeq = windowed
    ? await drive(reinFan(`rein-seq-${k}`), k, answerSchedule(k, null), `Rein ${variant}`)
    : rein;
  if (windowed)
    assertSameState(`parallel-interrupts ${variant} (sequential)`, reinSeq.final, peer.final);
  const peerSeqReruns = (k * (k + 1)) / 2;
  const base = { scenario: "parallel-interrupts", variant };
  const perAnswer = windowed
    ? `per answer (${rein.samples.length} of ${k} measured: start, middle, end)`
    : `per answer (all ${k}, one at a time)`;
  const rows: ResultRow[] = [
    {
      ...base,
      metric: "fan out and pause (first invoke)",
      rein: value("ms", rein.startMs),
      peer: value("ms", peer.startMs),
    },
    {
      ...base,
      metric: perAnswer,
      rein: timing("ms", summarize(rein.samples.map((s) => s.ms))),
      peer: timing("ms", summarize(peer.samples.map((s) => s.ms))),
    },
    {
      ...base,
      metric: `total of ${k} answers, one at a time`,
      rein: value("ms", reinSeq.totalMs),
      peer: windowed
        ? estimate("ms", estimateSequentialTotal(k, peer.samples))
        : value("ms", peer.totalMs),
      ...(windowed
        ? {
            note: "LangGraph.js: linear fit of the measured answers against the number still pending, summed over K..1",
          }
        : {}),
    },
    {
      ...base,
      metric: "node bodies re-executed by the answers",
      rein: value("count", reinSeq.reruns),
      peer: windowed ? estimate("count", peerSeqReruns) : value("count", peer.reruns),
      ...(windowed
        ? {
            note: `LangGraph.js: K(K+1)/2; on the sampled schedule it ran exactly the predicted ${peer.reruns}`,
          }
        : {}),
    },
  ];
  const counters = {
    k,
    reinBodies: rein.bodies,
    peerBodies: peer.bodies,
    reinReruns: reinSeq.reruns,
    peerReruns: peer.reruns,
    commands: groups.length,
  };
  const decoded = k > 1 ? await countDecoding(k) : undefined;
  const facts = decoded
    ? {
        [`decoded records per answer, ${variant}`]: decoded.records,
        [`decoded bytes per answer, ${variant}`]: decoded.chars,
      }
    : {};
  return { rows, check: { variant, rein: rein.final, peer: peer.final, counters }, facts };
}

async function run(ctx: ScenarioContext): Promise<ScenarioOutput> {
  // LangGraph.js adds one abort listener per parallel task to a shared signal; Node warns past 10.
  setMaxListeners(0);
  await drive(reinFan("warmup"), 5, answerSchedule(5, null), "Rein warm-up");
  await drive(peerFan("warmup"), 5, answerSchedule(5, null), "LangGraph.js warm-up");
  const rows: ResultRow[] = [];
  const checks: VariantCheck[] = [];
  const facts: Record<string, number> = {};
  for (const { k, window } of bySize(ctx, SIZES)) {
    const out = await runK(ctx, k, window);
    rows.push(...out.rows);
    checks.push(out.check);
    Object.assign(facts, out.facts);
  }
  return { rows, checks, facts };
}

/** Scenario 3: K parallel interrupts (Send fan-out) answered one at a time by interrupt id. */
export const parallelInterrupts: Scenario = {
  name: "parallel-interrupts",
  title: "3. Answering K parallel interrupts one at a time",
  description:
    "A node fans out K tasks with `Send`; each task calls `interrupt()`. The K interrupts are then answered one by one, by interrupt id " +
    "(Rein `Command.resumeMap({ [id]: v })`, LangGraph.js `new Command({ resume: { [id]: v } })`), in a fixed shuffled order, in memory. " +
    "Node bodies are counted inside the worker node. For K = 1,000 answering every interrupt singly on LangGraph.js would take many minutes " +
    "(each answer re-runs every paused sibling), so both systems follow the same sampled schedule: 10 single answers at the start, middle and end " +
    "(measured) and two unmeasured batch answers between them; Rein's one-at-a-time total is measured in a separate full run, LangGraph.js's is " +
    "estimated from a linear fit of its measured answers (marked ≈).",
  run,
};
