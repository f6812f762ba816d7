/**
 * Scenario 5 — many paused threads: create N threads that each wait for a person, measure the
 * store, fetch a page of the approval queue across all threads, and resume one random thread.
 * Rein keeps interrupts as indexed rows, so the queue is a query; LangGraph.js has no
 * cross-thread interrupt query, so its closest equivalent is scanning checkpoints.
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
import { assertCount, assertSameState } from "../harness/check.ts";
import { peerInterrupts, peerScanPending, peerThread } from "../harness/peer.ts";
import { skipped, timing, value, type Cell, type ResultRow } from "../harness/result.ts";
import {
  bySize,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutput,
  type VariantCheck,
} from "../harness/scenario.ts";
import { nowMs, sample, summarize } from "../harness/stats.ts";
import {
  storeFactory,
  useStore,
  type StoreHandle,
  type StoreKind,
  type Used,
} from "../harness/stores.ts";

/** State of one support thread. */
export interface TicketState {
  ticket: number;
  decision: string;
}

/** One pending interrupt as the queue shows it: the ticket it asks about. */
interface QueueItem {
  threadId: string;
  ticket: number;
}

/** One system on one store. */
interface Desk {
  /** Starts ticket `i`'s thread; it pauses for approval when `ask` is true, else completes. */
  open(i: number, ask: boolean): Promise<void>;
  /** The newest `limit` pending interrupts across all threads. */
  queue(limit: number): Promise<QueueItem[]>;
  /** Answers thread `i`'s interrupt; returns the final state. */
  resume(i: number, decision: string): Promise<TicketState>;
}

const threadOf = (i: number): string => `ticket-${i}`;

function reinDesk(saver: Checkpointer): Desk {
  const graph = new StateGraph({
    ticket: lastValue<number>(() => -1),
    ask: lastValue<boolean>(() => true),
    decision: lastValue<string>(() => ""),
  })
    .addNode("review", (s, ctx) => ({
      decision: s.ask ? ctx.interrupt<string>({ ticket: s.ticket }) : "auto",
    }))
    .addEdge(START, "review")
    .addEdge("review", END)
    .compile({ checkpointer: saver });
  return {
    async open(i, ask) {
      const r = await graph.invoke({ ticket: i, ask }, { threadId: threadOf(i) });
      if (r.status !== (ask ? "interrupted" : "done"))
        throw new Error(`Rein: ticket ${i} ended ${r.status}`);
    },
    async queue(limit) {
      const page = await graph.listInterrupts({ status: "pending", limit });
      return page.items.map((it) => ({
        threadId: it.threadId,
        ticket: (it.payload as { ticket: number }).ticket,
      }));
    },
    async resume(i, decision) {
      const r = await graph.resume(RunConfig.thread(threadOf(i)), Command.resume(decision));
      if (r.status !== "done")
        throw new Error(`Rein: ticket ${i} ended ${r.status} after the answer`);
      return { ticket: r.values.ticket, decision: r.values.decision };
    },
  };
}

const PeerState = Annotation.Root({
  ticket: Annotation<number>(),
  ask: Annotation<boolean>(),
  decision: Annotation<string>(),
});

function peerDesk(saver: BaseCheckpointSaver): Desk {
  const graph = new PeerGraph(PeerState)
    .addNode("review", (s) => ({
      decision: s.ask ? peerInterrupt<{ ticket: number }, string>({ ticket: s.ticket }) : "auto",
    }))
    .addEdge(PEER_START, "review")
    .addEdge("review", PEER_END)
    .compile({ checkpointer: saver });
  return {
    async open(i, ask) {
      const r = await graph.invoke({ ticket: i, ask }, peerThread(threadOf(i)));
      if (peerInterrupts(r).length !== (ask ? 1 : 0))
        throw new Error(`LangGraph.js: ticket ${i} did not ${ask ? "pause" : "complete"}`);
    },
    async queue(limit) {
      const { items } = await peerScanPending<{ ticket: number }>(saver, limit);
      return items.map((it) => ({ threadId: it.threadId, ticket: it.value.ticket }));
    },
    async resume(i, decision) {
      const r = await graph.invoke(new PeerCommand({ resume: decision }), peerThread(threadOf(i)));
      return { ticket: r.ticket, decision: r.decision };
    },
  };
}

/**
 * Sizes. `pagesAfter` has fewer repetitions than `pages`: the peer's scan past 1,000 finished
 * threads takes seconds per page at N = 20,000, and the total run has to stay within minutes.
 */
const PARAMS = {
  full: {
    threads: 20_000,
    finished: 1_000,
    page: 50,
    concurrency: 16,
    pages: { warmup: 2, reps: 15 },
    pagesAfter: { warmup: 1, reps: 5 },
    resumes: { warmup: 5, reps: 50 },
  },
  quick: {
    threads: 500,
    finished: 50,
    page: 50,
    concurrency: 16,
    pages: { warmup: 1, reps: 5 },
    pagesAfter: { warmup: 1, reps: 3 },
    resumes: { warmup: 2, reps: 10 },
  },
  tiny: {
    threads: 60,
    finished: 5,
    page: 50,
    concurrency: 4,
    pages: { warmup: 0, reps: 2 },
    pagesAfter: { warmup: 0, reps: 2 },
    resumes: { warmup: 1, reps: 2 },
  },
};

/** Runs `fn(i)` for i in [from, to) with `concurrency` calls in flight. */
async function pool(
  from: number,
  to: number,
  concurrency: number,
  fn: (i: number) => Promise<void>,
): Promise<void> {
  let next = from;
  const worker = async (): Promise<void> => {
    while (next < to) await fn(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** What one system measured on one store. */
interface Desked {
  createS: number;
  logical: number;
  disk: number;
  pageMs: number[];
  pageAfterMs: number[];
  resumeMs: number[];
  /** The first queue page, and the state of the first resumed thread. */
  firstPage: QueueItem[];
  resumed: TicketState[];
}

/** A fixed pseudo-random sequence of distinct paused tickets to resume. */
function resumeOrder(threads: number, count: number): number[] {
  const picked = new Set<number>();
  let x = 987654321;
  while (picked.size < Math.min(count, threads)) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    picked.add(x % threads);
  }
  return [...picked];
}

function checkPage(label: string, page: QueueItem[], size: number, threads: number): void {
  assertCount(`${label}: queue page size`, page.length, size);
  assertCount(
    `${label}: distinct threads in the page`,
    new Set(page.map((p) => p.threadId)).size,
    size,
  );
  for (const item of page)
    if (item.threadId !== threadOf(item.ticket) || item.ticket < 0 || item.ticket >= threads)
      throw new Error(`${label}: bad queue item ${JSON.stringify(item)}`);
}

async function exercise<S>(
  store: StoreHandle<S>,
  desk: Desk,
  ctx: ScenarioContext,
  label: string,
): Promise<Desked> {
  const p = bySize(ctx, PARAMS);
  const t0 = nowMs();
  await pool(0, p.threads, p.concurrency, (i) => desk.open(i, true));
  const createS = (nowMs() - t0) / 1000;
  const logical = (await store.logicalBytes()) ?? 0;
  const disk = (await store.diskBytes()) ?? 0;
  ctx.log(
    `paused-threads: ${label} created ${p.threads} paused threads in ${createS.toFixed(1)} s`,
  );
  let firstPage: QueueItem[] = [];
  const pageMs = await sample(p.pages, async () => {
    firstPage = await desk.queue(p.page);
  });
  checkPage(label, firstPage, p.page, p.threads);
  // Newer threads that finished without pausing: the queue must look past them.
  await pool(p.threads, p.threads + p.finished, p.concurrency, (i) => desk.open(i, false));
  let laterPage: QueueItem[] = [];
  const pageAfterMs = await sample(p.pagesAfter, async () => {
    laterPage = await desk.queue(p.page);
  });
  checkPage(`${label} after finished threads`, laterPage, p.page, p.threads);
  return { createS, logical, disk, pageMs, pageAfterMs, resumeMs: [], firstPage, resumed: [] };
}

/**
 * Resumes the same random tickets on both systems, alternating one by one (the first to go
 * swapped every ticket), so a load change on the shared machine falls on both alike.
 */
async function pairedResumes(
  ctx: ScenarioContext,
  desks: readonly [Desk, Desked][],
): Promise<void> {
  const p = bySize(ctx, PARAMS);
  const order = resumeOrder(p.threads, p.resumes.warmup + p.resumes.reps);
  for (const [k, ticket] of order.entries()) {
    const turn = k % 2 === 0 ? desks : [...desks].reverse();
    for (const [desk, out] of turn) {
      const start = nowMs();
      out.resumed.push(await desk.resume(ticket, `approved ${ticket}`));
      if (k >= p.resumes.warmup) out.resumeMs.push(nowMs() - start);
    }
  }
}

const PEER_QUEUE_NOTE =
  "LangGraph.js has no cross-thread interrupt query: measured is the closest thing, scanning `checkpointer.list({})` newest first in pages of 100 and keeping each thread's newest checkpoint with pending `__interrupt__` writes";

function rowsFor(
  ctx: ScenarioContext,
  kind: StoreKind,
  rein: Desked | Cell,
  peer: Desked | Cell,
): ResultRow[] {
  const p = bySize(ctx, PARAMS);
  const cell = (d: Desked | Cell, f: (d: Desked) => Cell): Cell => ("createS" in d ? f(d) : d);
  const base = { scenario: "paused-threads", variant: kind };
  return [
    {
      ...base,
      metric: `create ${p.threads.toLocaleString("en-US")} paused threads (total, ${p.concurrency} in flight)`,
      rein: cell(rein, (d) => value("s", d.createS)),
      peer: cell(peer, (d) => value("s", d.createS)),
    },
    {
      ...base,
      metric: "logical bytes of the paused threads",
      rein: cell(rein, (d) => value("bytes", d.logical)),
      peer: cell(peer, (d) => value("bytes", d.logical)),
    },
    {
      ...base,
      metric: "disk bytes of the paused threads",
      rein: cell(rein, (d) => value("bytes", d.disk)),
      peer: cell(peer, (d) => value("bytes", d.disk)),
    },
    {
      ...base,
      metric: `page of ${p.page} pending interrupts across all threads`,
      rein: cell(rein, (d) => timing("ms", summarize(d.pageMs))),
      peer: cell(peer, (d) => timing("ms", summarize(d.pageMs))),
      note: PEER_QUEUE_NOTE,
      comparison: "feature",
    },
    {
      ...base,
      metric: `the same page after ${p.finished.toLocaleString("en-US")} newer threads finished without pausing`,
      rein: cell(rein, (d) => timing("ms", summarize(d.pageAfterMs))),
      peer: cell(peer, (d) => timing("ms", summarize(d.pageAfterMs))),
      note: "the scan must read past every finished thread's checkpoints; Rein's indexed query does not see them",
      comparison: "feature",
    },
    {
      ...base,
      metric: "resume one random paused thread to completion",
      rein: cell(rein, (d) => timing("ms", summarize(d.resumeMs))),
      peer: cell(peer, (d) => timing("ms", summarize(d.resumeMs))),
    },
  ];
}

async function runStore(
  ctx: ScenarioContext,
  kind: StoreKind,
): Promise<{ rows: ResultRow[]; check: VariantCheck | null }> {
  if (!ctx.postgres.ok && kind === "postgres") {
    const s = skipped(ctx.postgres.reason);
    return { rows: rowsFor(ctx, kind, s, s), check: null };
  }
  const p = bySize(ctx, PARAMS);
  const stores = storeFactory(ctx, kind);
  // Both stores stay open until the resumes, which alternate between the systems.
  const held: { peer: Used<Desked> } = { peer: { ok: false, cell: skipped("not run") } };
  const rein = await useStore(
    () => stores.rein("paused"),
    async (r) => {
      const reinOut = await exercise(r, reinDesk(r.saver), ctx, `Rein ${kind}`);
      held.peer = await useStore(
        () => stores.peer("paused"),
        async (q) => {
          const peerOut = await exercise(q, peerDesk(q.saver), ctx, `LangGraph.js ${kind}`);
          ctx.log(`paused-threads: ${kind}, resumes alternating between the systems`);
          await pairedResumes(ctx, [
            [reinDesk(r.saver), reinOut],
            [peerDesk(q.saver), peerOut],
          ]);
          return peerOut;
        },
      );
      if (!held.peer.ok) await pairedResumes(ctx, [[reinDesk(r.saver), reinOut]]);
      return reinOut;
    },
  );
  const peer = held.peer;
  const expected = resumeOrder(p.threads, p.resumes.warmup + p.resumes.reps).map((i) => ({
    ticket: i,
    decision: `approved ${i}`,
  }));
  if (rein.ok)
    assertSameState(`paused-threads ${kind}: Rein resumed threads`, rein.value.resumed, expected);
  if (peer.ok)
    assertSameState(
      `paused-threads ${kind}: LangGraph.js resumed threads`,
      peer.value.resumed,
      expected,
    );
  const check =
    rein.ok && peer.ok
      ? {
          variant: kind,
          rein: rein.value.resumed,
          peer: peer.value.resumed,
          counters: {
            threads: p.threads,
            reinPage: rein.value.firstPage.length,
            peerPage: peer.value.firstPage.length,
          },
        }
      : null;
  return {
    rows: rowsFor(ctx, kind, rein.ok ? rein.value : rein.cell, peer.ok ? peer.value : peer.cell),
    check,
  };
}

/**
 * The payload of one paused thread, mean over the `threads` created: the JSON of its input state
 * and of the question its interrupt asks. What a store keeps beyond this is its own overhead.
 */
function payloadBytesPerThread(threads: number): number {
  let total = 0;
  for (let i = 0; i < threads; i++)
    total += JSON.stringify({ ticket: i, ask: true }).length + JSON.stringify({ ticket: i }).length;
  return total / threads;
}

async function run(ctx: ScenarioContext): Promise<ScenarioOutput> {
  const { threads } = bySize(ctx, PARAMS);
  const out: ScenarioOutput = {
    rows: [],
    checks: [],
    facts: {
      "paused threads": threads,
      "payload bytes per paused thread": payloadBytesPerThread(threads),
    },
  };
  for (const kind of ["sqlite", "postgres"] as const) {
    ctx.log(`paused-threads: ${kind}`);
    const r = await runStore(ctx, kind);
    out.rows.push(...r.rows);
    if (r.check) out.checks.push(r.check);
  }
  return out;
}

/** Scenario 5: N paused threads — creation, size, the cross-thread queue, and one resume. */
export const pausedThreads: Scenario = {
  name: "paused-threads",
  title: "5. 20,000 paused threads",
  description:
    "Each thread is one ticket whose `review` node asks for approval with `interrupt()`. N threads are created (16 `invoke`s in flight), on a fresh " +
    "SQLite file and a fresh Postgres database per system; then the store is measured, the newest page of 50 pending interrupts across all threads is " +
    'fetched (Rein `listInterrupts({ status: "pending", limit: 50 })`), again after 1,000 newer threads finished without pausing, and random paused ' +
    "threads are resumed to completion one at a time, the same tickets on both systems alternating one by one (which goes first swapped every ticket) so that load on the machine falls on both alike. N = 20,000 (500 with `--quick`). Rein stores more per paused thread than the peer — a thread " +
    "row, a run row and an indexed interrupt row besides the checkpoint — which is what makes the approval queue an index lookup instead of a scan.",
  run,
};
