/**
 * Scenario 4 — storage growth: a conversation that appends a 1 KB message per step for 200
 * steps. A runtime that rewrites the whole list at every checkpoint writes O(n) bytes per step and
 * O(n²) in total; one that stores appends as deltas writes the same few bytes at step 200 as at
 * step 10.
 */
import {
  Annotation,
  DeltaChannel,
  END as PEER_END,
  START as PEER_START,
  StateGraph as PeerGraph,
  type BaseCheckpointSaver,
} from "@langchain/langgraph";
import { append, END, RunConfig, START, StateGraph, type Checkpointer } from "@rein/core";
import { assertSameState } from "../harness/check.ts";
import { peerThread } from "../harness/peer.ts";
import { skipped, timing, value, type Cell, type ResultRow } from "../harness/result.ts";
import {
  bySize,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutput,
  type VariantCheck,
} from "../harness/scenario.ts";
import { sample, summarize } from "../harness/stats.ts";
import {
  storeFactory,
  useStore,
  type StoreHandle,
  type StoreKind,
  type Used,
} from "../harness/stores.ts";

/** Size of one message, in characters (ASCII, so also bytes before encoding). */
export const MESSAGE_BYTES = 1024;

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/**
 * The k-th message (1-based) of the conversation: 1 KB of deterministic pseudo-random text, so
 * that Postgres's TOAST compression cannot shrink a repeated padding to nothing.
 */
export function message(k: number): string {
  let x = (k * 2654435761) >>> 0 || 1;
  let text = `message ${k} `;
  while (text.length < MESSAGE_BYTES) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    text += ALPHABET.charAt(x & 63);
  }
  return text;
}

/** A conversation on one system: runs `steps` steps, calling `observe(k)` once step k has committed. */
interface Conversation {
  run(threadId: string, steps: number, observe: (k: number) => Promise<void>): Promise<string[]>;
  /** Reads the thread's current state back from the store. */
  read(threadId: string): Promise<string[]>;
}

function reinConversation(saver: Checkpointer, steps: number): Conversation {
  let observe: (k: number) => Promise<void> = () => Promise.resolve();
  const graph = new StateGraph({ messages: append<string>() })
    .addNode("say", async (s) => {
      // Step k's checkpoint is committed before step k + 1 runs: observe it here.
      await observe(s.messages.length);
      return { messages: message(s.messages.length + 1) };
    })
    .addEdge(START, "say")
    .addConditionalEdges("say", (s) => (s.messages.length < steps ? "say" : END), ["say", END])
    .compile({ checkpointer: saver, recursionLimit: steps + 10 });
  return {
    async run(threadId, n, obs) {
      observe = obs;
      const r = await graph.invoke({}, { threadId });
      if (r.status !== "done" || r.values.messages.length !== n)
        throw new Error(`Rein conversation ended ${r.status}`);
      return r.values.messages;
    },
    async read(threadId) {
      return (await graph.getState(RunConfig.thread(threadId))).values.messages;
    },
  };
}

/** How the peer stores the message list: its default reducer channel, or the beta DeltaChannel. */
type PeerChannel = "reducer" | "delta";

const PeerReducerState = Annotation.Root({
  messages: Annotation<string[], string>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});
const PeerDeltaState = Annotation.Root({
  messages: () =>
    new DeltaChannel<string[], string>((state, writes) => state.concat(writes), {
      initialValueFactory: () => [],
    }),
});

function peerConversation(
  saver: BaseCheckpointSaver,
  steps: number,
  channel: PeerChannel,
): Conversation {
  let observe: (k: number) => Promise<void> = () => Promise.resolve();
  const say = async (s: { messages: string[] }): Promise<{ messages: string }> => {
    await observe(s.messages.length);
    return { messages: message(s.messages.length + 1) };
  };
  const route = (s: { messages: string[] }): string =>
    s.messages.length < steps ? "say" : PEER_END;
  // `durability: "sync"` makes each step's checkpoint land before the next step runs, so the
  // observation in the node sees it; it changes when the peer waits, not what it writes.
  const config = (
    threadId: string,
  ): { configurable: { thread_id: string }; recursionLimit: number; durability: "sync" } => ({
    ...peerThread(threadId),
    recursionLimit: steps + 10,
    durability: "sync",
  });
  const graph =
    channel === "reducer"
      ? new PeerGraph(PeerReducerState)
          .addNode("say", say)
          .addEdge(PEER_START, "say")
          .addConditionalEdges("say", route, ["say", PEER_END])
          .compile({ checkpointer: saver })
      : new PeerGraph(PeerDeltaState)
          .addNode("say", say)
          .addEdge(PEER_START, "say")
          .addConditionalEdges("say", route, ["say", PEER_END])
          .compile({ checkpointer: saver });
  return {
    async run(threadId, n, obs) {
      observe = obs;
      const r = await graph.invoke({}, config(threadId));
      if (r.messages.length !== n)
        throw new Error(`LangGraph.js conversation stopped at ${r.messages.length} messages`);
      return r.messages;
    },
    async read(threadId) {
      return ((await graph.getState(peerThread(threadId))).values as { messages: string[] })
        .messages;
    },
  };
}

/** What one conversation stored. */
interface Growth {
  /** Logical bytes after step k, for the observed k. */
  after: Map<number, number>;
  totalLogical: number;
  disk: number;
  readMs: number[];
  final: string[];
}

const PARAMS = {
  full: { steps: 200, reads: { warmup: 5, reps: 30 } },
  quick: { steps: 200, reads: { warmup: 2, reps: 5 } },
  tiny: { steps: 12, reads: { warmup: 0, reps: 2 } },
};

async function grow<S>(
  store: StoreHandle<S>,
  conversation: Conversation,
  ctx: ScenarioContext,
): Promise<Growth> {
  const { steps, reads } = bySize(ctx, PARAMS);
  // Logical bytes before step 1 (after the input checkpoint), at the midpoint and at the end:
  // enough for the mean per checkpoint over every step and over each half.
  const watch = new Set([0, half(steps)]);
  const after = new Map<number, number>();
  const final = await conversation.run("conversation", steps, async (k) => {
    if (watch.has(k)) after.set(k, (await store.logicalBytes()) ?? 0);
  });
  const totalLogical = (await store.logicalBytes()) ?? 0;
  after.set(steps, totalLogical);
  const readMs = await sample(reads, () => conversation.read("conversation"));
  assertSameState("storage-growth read-back", await conversation.read("conversation"), final);
  return { after, totalLogical, disk: (await store.diskBytes()) ?? 0, readMs, final };
}

/** The midpoint step: the amortized row covers the second half of the conversation. */
const half = (steps: number): number => Math.floor(steps / 2);

/**
 * Mean logical bytes per checkpoint over steps from+1 … to: the growth of the store between the
 * two observations divided by the steps. A mean over whole snapshot periods, not one chosen step
 * (a single step between snapshots would flatter whichever system snapshots less often).
 */
export function meanPerStep(after: ReadonlyMap<number, number>, from: number, to: number): number {
  return ((after.get(to) ?? NaN) - (after.get(from) ?? NaN)) / (to - from);
}

function rowsFor(
  variant: string,
  rein: Growth | Cell,
  peer: Growth | Cell,
  steps: number,
): ResultRow[] {
  const cell = (g: Growth | Cell, f: (g: Growth) => Cell): Cell => ("after" in g ? f(g) : g);
  const base = { scenario: "storage-growth", variant };
  return [
    ...(
      [
        [0, steps],
        [0, half(steps)],
        [half(steps), steps],
      ] as const
    ).map(([from, to]) => ({
      ...base,
      metric: `mean bytes per checkpoint, steps ${from + 1}–${to}`,
      rein: cell(rein, (g) => value("bytes", meanPerStep(g.after, from, to))),
      peer: cell(peer, (g) => value("bytes", meanPerStep(g.after, from, to))),
    })),
    {
      ...base,
      metric: `total logical bytes after ${steps} steps`,
      rein: cell(rein, (g) => value("bytes", g.totalLogical)),
      peer: cell(peer, (g) => value("bytes", g.totalLogical)),
    },
    {
      ...base,
      metric: `disk bytes after ${steps} steps`,
      rein: cell(rein, (g) => value("bytes", g.disk)),
      peer: cell(peer, (g) => value("bytes", g.disk)),
    },
    {
      ...base,
      metric: `read the state after ${steps} steps (getState)`,
      rein: cell(rein, (g) => timing("ms", summarize(g.readMs))),
      peer: cell(peer, (g) => timing("ms", summarize(g.readMs))),
    },
  ];
}

async function runStore(
  ctx: ScenarioContext,
  kind: StoreKind,
): Promise<{ rows: ResultRow[]; checks: VariantCheck[] }> {
  const { steps } = bySize(ctx, PARAMS);
  const variants = [`${kind}`, `${kind}, LangGraph.js DeltaChannel (beta)`] as const;
  if (kind === "postgres" && !ctx.postgres.ok) {
    const s = skipped(ctx.postgres.reason);
    return { rows: variants.flatMap((v) => rowsFor(v, s, s, steps)), checks: [] };
  }
  ctx.log(`storage-growth: ${kind}`);
  const stores = storeFactory(ctx, kind);
  const rein = await useStore(
    () => stores.rein("growth"),
    (s) => grow(s, reinConversation(s.saver, steps), ctx),
  );
  const peer = await useStore(
    () => stores.peer("growth"),
    (s) => grow(s, peerConversation(s.saver, steps, "reducer"), ctx),
  );
  const delta = await useStore(
    () => stores.peer("growth_delta"),
    (s) => grow(s, peerConversation(s.saver, steps, "delta"), ctx),
  );
  const expected = Array.from({ length: steps }, (_, i) => message(i + 1));
  for (const [label, used] of [
    ["Rein", rein],
    ["LangGraph.js", peer],
    ["LangGraph.js DeltaChannel", delta],
  ] as const)
    if (used.ok)
      assertSameState(
        `storage-growth ${kind}: ${label} vs the expected conversation`,
        used.value.final,
        expected,
      );
  const checks: VariantCheck[] = [];
  if (rein.ok && peer.ok)
    checks.push({
      variant: variants[0],
      rein: rein.value.final,
      peer: peer.value.final,
      counters: { steps },
    });
  if (rein.ok && delta.ok)
    checks.push({
      variant: variants[1],
      rein: rein.value.final,
      peer: delta.value.final,
      counters: { steps },
    });
  const unwrap = (used: Used<Growth>): Growth | Cell => (used.ok ? used.value : used.cell);
  return {
    rows: [
      ...rowsFor(variants[0], unwrap(rein), unwrap(peer), steps),
      ...rowsFor(variants[1], unwrap(rein), unwrap(delta), steps),
    ],
    checks,
  };
}

async function run(ctx: ScenarioContext): Promise<ScenarioOutput> {
  const { steps } = bySize(ctx, PARAMS);
  // The payload is what the conversation appended: one message per step.
  const facts = { "conversation steps": steps, "payload bytes": steps * MESSAGE_BYTES };
  const out: ScenarioOutput = { rows: [], checks: [], facts };
  for (const kind of ["sqlite", "postgres"] as const) {
    const r = await runStore(ctx, kind);
    out.rows.push(...r.rows);
    out.checks.push(...r.checks);
  }
  return out;
}

/** Scenario 4: storage growth of a 200-step conversation appending 1 KB per step. */
export const storageGrowth: Scenario = {
  name: "storage-growth",
  title: "4. Storage growth of a long conversation",
  description:
    `One node appends a ${MESSAGE_BYTES}-byte message to an append/reducer list channel and loops, one step per message, for 200 steps in one \`invoke\`, ` +
    "on a fresh SQLite file and a fresh Postgres database per system. The node measures the store's logical bytes when it starts (so after the previous step's " +
    'checkpoint committed; LangGraph.js runs with `durability: "sync"` here so that its checkpoint has landed too). The peer is measured twice: with its ' +
    "default reducer channel (`Annotation({ reducer })`), and with `DeltaChannel`, the beta channel of @langchain/langgraph 1.x that stores writes instead of the " +
    "whole list, and writes a full snapshot every 100 updates by default (so steps 100 and 200 are snapshot steps); Rein writes a full snapshot of an append channel once the bytes appended since the last one exceed three times its size (at least 64 KB). " +
    "Bytes per checkpoint are means over ranges of steps (all 200, and each half), never one chosen step: a step between snapshots would flatter whichever system snapshots less often. " +
    "Messages are pseudo-random text, so Postgres TOAST compression does not shrink them. The last row reads the final state back (`getState`): " +
    "Rein rebuilds the list from its 200 delta rows (one recursive query), while the peer's default reducer keeps the whole list in the newest " +
    "checkpoint and parses one blob, so reading back is where delta storage pays.",
  run,
};
