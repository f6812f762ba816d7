/**
 * Targeted resume of one sub-agent among many paused ones. A supervisor fans out N sub-agents
 * (compiled subgraphs) with Send; each pauses on an approval. A person answers one sub-agent at a
 * time. Rein addresses it with `resumeTargeted({ runId, namespace })` and runs that child's task
 * only; LangGraph.js has no targeted resume, so its closest form is an answer by interrupt id,
 * after which it re-runs every still-paused sibling subgraph.
 */
import { setMaxListeners } from "node:events";
import {
  Annotation,
  Command as PeerCommand,
  interrupt as peerInterrupt,
  MemorySaver as PeerMemorySaver,
  Send as PeerSend,
  START as PEER_START,
  StateGraph as PeerGraph,
} from "@langchain/langgraph";
import { append, Command, lastValue, MemorySaver, Send, START, StateGraph } from "@rein/core";
import { assertSameState } from "../harness/check.ts";
import { timing, value, type ResultRow } from "../harness/result.ts";
import {
  bySize,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutput,
  type Size,
  type VariantCheck,
} from "../harness/scenario.ts";
import { peerInterrupts, peerThread } from "../harness/peer.ts";
import { allPending } from "../harness/pending.ts";
import { nowMs, summarize } from "../harness/stats.ts";

/** One system with N paused sub-agents on one thread. */
interface Fleet {
  /** Fans out `n` sub-agents that all pause; returns item → handle to answer it. */
  start(n: number): Promise<number[]>;
  /** Answers the sub-agent of `item` alone. */
  answerOne(item: number): Promise<void>;
  /** Answers every sub-agent still pending, in one command; true when the run is done. */
  answerRest(): Promise<boolean>;
  /** Sorted answers written by the sub-agents. */
  final(): number[];
  /** Executions of the sub-agents' approval node so far. */
  bodies(): number;
}

const answerFor = (i: number): number => i * 10 + 1;

function reinFleet(threadId: string): Fleet {
  let bodies = 0;
  let out: number[] = [];
  const handles = new Map<number, { runId: string; id: string }>();
  const saver = new MemorySaver();
  const agent = new StateGraph({ i: lastValue<number>(() => 0), out: append<number>() })
    .addNode("approve", (s, ctx) => {
      bodies++;
      return { out: ctx.interrupt<number>({ i: s.i }) };
    })
    .addEdge(START, "approve")
    .compile({ checkpointer: saver, name: "agent" });
  const supervisor = new StateGraph({ items: lastValue<number[]>(() => []), out: append<number>() })
    .addNode("fan", () => ({}))
    .addNode("agent", agent)
    .addEdge(START, "fan")
    .addConditionalEdges("fan", (s) => s.items.map((i) => new Send("agent", { i })), ["agent"])
    .compile({ checkpointer: saver, name: "supervisor" });
  return {
    async start(n) {
      const r = await supervisor.invoke(
        { items: Array.from({ length: n }, (_, i) => i) },
        { threadId },
      );
      // The result lists the oldest page of pending interrupts; the rest come from the queue.
      const pending =
        r.pendingCount > r.interrupts.length
          ? await allPending(supervisor, threadId)
          : r.interrupts;
      for (const it of pending)
        handles.set((it.payload as { i: number }).i, { runId: it.runId, id: it.id });
      return [...handles.keys()];
    },
    async answerOne(item) {
      const handle = handles.get(item);
      if (!handle) throw new Error(`no sub-agent for ${item}`);
      await supervisor.resumeTargeted(
        { runId: handle.runId, namespace: ["agent"] },
        Command.resume(answerFor(item)),
      );
      handles.delete(item);
    },
    async answerRest() {
      const map = Object.fromEntries([...handles].map(([item, h]) => [h.id, answerFor(item)]));
      const r = await supervisor.invoke(Command.resumeMap(map), { threadId });
      out = r.values.out;
      return r.status === "done";
    },
    final: () => [...out].sort((a, b) => a - b),
    bodies: () => bodies,
  };
}

const AgentState = Annotation.Root({
  i: Annotation<number>(),
  out: Annotation<number[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});
const SupervisorState = Annotation.Root({
  items: Annotation<number[]>(),
  out: Annotation<number[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

function peerFleet(threadId: string): Fleet {
  let bodies = 0;
  let out: number[] = [];
  const handles = new Map<number, string>();
  const agent = new PeerGraph(AgentState)
    .addNode("approve", (s) => {
      bodies++;
      return { out: [peerInterrupt<{ i: number }, number>({ i: s.i })] };
    })
    .addEdge(PEER_START, "approve")
    .compile();
  const supervisor = new PeerGraph(SupervisorState)
    .addNode("fan", () => ({}))
    .addNode("agent", agent)
    .addEdge(PEER_START, "fan")
    .addConditionalEdges("fan", (s) => s.items.map((i) => new PeerSend("agent", { i })), ["agent"])
    .compile({ checkpointer: new PeerMemorySaver() });
  const config = { ...peerThread(threadId), recursionLimit: 10_000 };
  return {
    async start(n) {
      const r = await supervisor.invoke({ items: Array.from({ length: n }, (_, i) => i) }, config);
      for (const it of peerInterrupts<{ i: number }>(r))
        handles.set(it.value?.i ?? -1, it.id ?? "");
      return [...handles.keys()];
    },
    async answerOne(item) {
      const id = handles.get(item);
      if (!id) throw new Error(`no sub-agent for ${item}`);
      await supervisor.invoke(new PeerCommand({ resume: { [id]: answerFor(item) } }), config);
      handles.delete(item);
    },
    async answerRest() {
      const map = Object.fromEntries([...handles].map(([item, id]) => [id, answerFor(item)]));
      const r = await supervisor.invoke(new PeerCommand({ resume: map }), config);
      out = r.out;
      return peerInterrupts(r).length === 0;
    },
    final: () => [...out].sort((a, b) => a - b),
    bodies: () => bodies,
  };
}

interface Drive {
  samples: number[];
  /** Approval-node bodies run by the measured single answers. */
  reruns: number;
  final: number[];
}

async function drive(fleet: Fleet, n: number, answers: number, label: string): Promise<Drive> {
  const items = await fleet.start(n);
  if (items.length !== n)
    throw new Error(`${label}: expected ${n} paused sub-agents, got ${items.length}`);
  const before = fleet.bodies();
  const samples: number[] = [];
  // Answer sub-agents spread over the fan-out, one at a time.
  for (let k = 0; k < answers; k++) {
    const item = items[Math.floor(((k + 0.5) * n) / answers)] as number;
    const t0 = nowMs();
    await fleet.answerOne(item);
    samples.push(nowMs() - t0);
  }
  const reruns = fleet.bodies() - before;
  if (!(await fleet.answerRest()))
    throw new Error(`${label}: the run is not done after answering every sub-agent`);
  return { samples, reruns, final: fleet.final() };
}

const SIZES: Record<Size, { fleets: readonly number[]; answers: number }> = {
  full: { fleets: [11, 1001], answers: 5 },
  quick: { fleets: [11, 101], answers: 3 },
  tiny: { fleets: [3, 11], answers: 2 },
};

/** Scenario: one targeted resume at 10 vs 1,000 pending siblings. */
export const targetedResume: Scenario = {
  name: "targeted-resume",
  title: "3b. Targeted resume of one sub-agent among many",
  description:
    "A supervisor fans out N sub-agents (compiled subgraphs, one per Send), each pausing on an approval, in memory. One sub-agent at a time is answered: Rein with `resumeTargeted({ runId, namespace })`, LangGraph.js (which has no targeted resume) with an answer by interrupt id. Timed: one answer while N−1 siblings stay paused. Counted: approval-node bodies run by those answers. Then all remaining sub-agents are answered in one command and both final states are compared.",
  async run(ctx: ScenarioContext): Promise<ScenarioOutput> {
    // LangGraph.js adds one abort listener per parallel task to a shared signal; Node warns past 10.
    setMaxListeners(0);
    await drive(reinFleet("tr-warmup"), 5, 2, "Rein warm-up");
    await drive(peerFleet("tr-warmup"), 5, 2, "LangGraph.js warm-up");
    const { fleets, answers } = bySize(ctx, SIZES);
    const rows: ResultRow[] = [];
    const checks: VariantCheck[] = [];
    for (const n of fleets) {
      const variant = `${n - 1} paused siblings`;
      ctx.log(`targeted-resume: ${variant}`);
      const rein = await drive(reinFleet(`tr-rein-${n}`), n, answers, `Rein ${variant}`);
      const peer = await drive(peerFleet(`tr-peer-${n}`), n, answers, `LangGraph.js ${variant}`);
      assertSameState(`targeted-resume ${variant}`, rein.final, peer.final);
      rows.push(
        {
          scenario: "targeted-resume",
          variant,
          metric: `one targeted resume (${answers} answers)`,
          rein: timing("ms", summarize(rein.samples)),
          peer: timing("ms", summarize(peer.samples)),
          note: "LangGraph.js: answer by interrupt id (no targeted resume)",
        },
        {
          scenario: "targeted-resume",
          variant,
          metric: `sub-agent bodies run by ${answers} answers`,
          rein: value("count", rein.reruns),
          peer: value("count", peer.reruns),
        },
      );
      checks.push({
        variant,
        rein: rein.final,
        peer: peer.final,
        counters: { reinReruns: rein.reruns, peerReruns: peer.reruns, answers },
      });
    }
    return { rows, checks };
  },
};
