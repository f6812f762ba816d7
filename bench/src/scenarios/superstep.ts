/**
 * Scenario 1 — superstep overhead: a chain of ten trivial nodes, run to completion, in memory.
 * What is left after the nodes do nothing is the runtime's per-step cost: scheduling, applying
 * writes, and (with a checkpointer) committing one checkpoint per step.
 */
import {
  Annotation,
  MemorySaver as PeerMemorySaver,
  StateGraph as PeerGraph,
} from "@langchain/langgraph";
import { END, lastValue, MemorySaver, START, StateGraph, type Checkpointer } from "@rein/core";
import { assertSameState } from "../harness/check.ts";
import { countCommits, memoryFloor, type FloorStore } from "../harness/floor.ts";
import { timing, type ResultRow } from "../harness/result.ts";
import {
  bySize,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutput,
  type VariantCheck,
} from "../harness/scenario.ts";
import { sample, summarize, type Repetitions } from "../harness/stats.ts";

/** Number of nodes (and so supersteps) in the chain. */
export const CHAIN_LENGTH = 10;

const names = Array.from({ length: CHAIN_LENGTH }, (_, i) => `n${i}`);

/** Final state of the chain for both systems. */
interface ChainState {
  n: number;
}

type Invoke = (input: ChainState, threadId: string) => Promise<ChainState>;

function reinChain(withSaver: boolean, saver: Checkpointer = new MemorySaver()): Invoke {
  let builder = new StateGraph({ n: lastValue<number>(() => 0) });
  for (const name of names) builder = builder.addNode(name, (s) => ({ n: s.n + 1 }));
  builder = builder
    .addEdge(START, names[0] as string)
    .addEdge(names[CHAIN_LENGTH - 1] as string, END);
  for (let i = 1; i < CHAIN_LENGTH; i++)
    builder = builder.addEdge(names[i - 1] as string, names[i] as string);
  const graph = builder.compile(withSaver ? { checkpointer: saver } : {});
  return async (input, threadId) => {
    const result = await graph.invoke(input, withSaver ? { threadId } : {});
    if (result.status !== "done") throw new Error(`Rein chain ended ${result.status}`);
    return { n: result.values.n };
  };
}

const PeerState = Annotation.Root({ n: Annotation<number>() });

function peerChain(withSaver: boolean): Invoke {
  const nodes = Object.fromEntries(
    names.map((name) => [name, (s: typeof PeerState.State) => ({ n: s.n + 1 })]),
  );
  const builder = new PeerGraph(PeerState).addNode(nodes);
  builder.addEdge("__start__", names[0] as string).addEdge(names[CHAIN_LENGTH - 1] as string, END);
  for (let i = 1; i < CHAIN_LENGTH; i++)
    builder.addEdge(names[i - 1] as string, names[i] as string);
  const graph = builder.compile(withSaver ? { checkpointer: new PeerMemorySaver() } : {});
  return async (input, threadId) => {
    const result = await graph.invoke(
      input,
      withSaver ? { configurable: { thread_id: threadId } } : {},
    );
    return { n: result.n };
  };
}

/**
 * The floor: a minimal superstep loop over the same ten node functions, awaiting each and
 * applying its write to a new state object; with a checkpointer, it serializes as many
 * checkpoints per run as Rein commits (the input's first, then one per step) into a map.
 */
function floorChain(commitsPerRun: number): { invoke: Invoke; floor: FloorStore } {
  const nodes = names.map(() => (s: ChainState) => Promise.resolve({ n: s.n + 1 }));
  const floor = memoryFloor();
  const before = Math.max(0, commitsPerRun - CHAIN_LENGTH);
  const invoke: Invoke = async (input, threadId) => {
    let state: ChainState = { ...input };
    let seq = 0;
    for (; seq < before; seq++) await floor.commit(threadId, seq, state);
    for (let step = 0; step < CHAIN_LENGTH; step++) {
      state = {
        ...state,
        ...(await (nodes[step] as (s: ChainState) => Promise<ChainState>)(state)),
      };
      if (seq < commitsPerRun) await floor.commit(threadId, seq++, state);
    }
    return state;
  };
  return { invoke, floor };
}

/** Checkpoints Rein's MemorySaver commits for one run of the chain, counted on an unmeasured run. */
async function reinCommitsPerRun(): Promise<number> {
  const counted = countCommits(new MemorySaver());
  await reinChain(true, counted.saver)({ n: 0 }, "count");
  return counted.count();
}

const REPS = {
  full: { warmup: 200, reps: 1000 },
  quick: { warmup: 20, reps: 100 },
  tiny: { warmup: 1, reps: 3 },
};

async function measure(
  invoke: Invoke,
  reps: Repetitions,
  prefix: string,
): Promise<{ perStepUs: number[]; final: ChainState }> {
  let final: ChainState = { n: -1 };
  const samples = await sample(reps, async (i) => {
    final = await invoke({ n: 0 }, `${prefix}-${i}`);
  });
  return { perStepUs: samples.map((ms) => (ms * 1000) / CHAIN_LENGTH), final };
}

async function run(ctx: ScenarioContext): Promise<ScenarioOutput> {
  const reps = bySize(ctx, REPS);
  const rows: ResultRow[] = [];
  const checks: VariantCheck[] = [];
  for (const [variant, withSaver] of [
    ["MemorySaver", true],
    ["no checkpointer", false],
  ] as const) {
    ctx.log(`superstep: ${variant}`);
    const rein = await measure(reinChain(withSaver), reps, "rein");
    const peer = await measure(peerChain(withSaver), reps, "peer");
    const commits = withSaver ? await reinCommitsPerRun() : 0;
    const floorLoop = floorChain(commits);
    const floor = await measure(floorLoop.invoke, reps, "floor");
    assertSameState(`superstep ${variant}`, rein.final, peer.final);
    assertSameState(`superstep ${variant} floor`, floor.final, rein.final);
    if (rein.final.n !== CHAIN_LENGTH)
      throw new Error(`superstep ${variant}: expected n = ${CHAIN_LENGTH}, got ${rein.final.n}`);
    rows.push({
      scenario: "superstep",
      variant,
      metric: `per superstep (${CHAIN_LENGTH}-node chain, ${reps.reps} runs)`,
      rein: timing("µs", summarize(rein.perStepUs)),
      peer: timing("µs", summarize(peer.perStepUs)),
      floor: timing("µs", summarize(floor.perStepUs)),
    });
    const runs = reps.warmup + reps.reps;
    checks.push({
      variant,
      rein: rein.final,
      peer: peer.final,
      counters: {
        runs,
        reinCommitsPerRun: commits,
        floorCommitsPerRun: floorLoop.floor.commits / runs,
      },
    });
  }
  return { rows, checks };
}

/** Scenario 1: superstep overhead of a 10-node chain of trivial nodes, in memory. */
export const superstep: Scenario = {
  name: "superstep",
  title: "1. Superstep overhead",
  description:
    `A chain of ${CHAIN_LENGTH} nodes that each add 1 to a number, invoked to completion on a fresh thread per run; ` +
    `the time of one \`invoke\` divided by ${CHAIN_LENGTH}. With each system's in-memory saver (one checkpoint per step) and without a checkpointer. ` +
    "The floor is a minimal superstep loop over the same node functions (await each, apply its write to a new state object), which with a checkpointer serializes as many checkpoints per run as Rein's MemorySaver commits (counted on an unmeasured run) into a map.",
  run,
};
