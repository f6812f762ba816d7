/**
 * Observing the answers applied through a store: a view of the store whose `answerInterrupts`
 * and `answerBatches` report each applied batch, so every path that resolves an interrupt in this
 * process — a resume, a bulk decision, the deadline timer, a cancellation — is counted without
 * the runtime knowing about metrics. The view is what the graphs are compiled against.
 *
 * What an observation needs of an interrupt (its creation time and root graph) comes from the
 * reads the runtime made before answering it, which the view remembers: counting an answer adds
 * no round trip to the store. Only an interrupt answered without being read through the view
 * (none of Rein's paths) is read once more, by id.
 */
import type { Checkpointer, InterruptId } from "@rein/core";
import {
  hasCapability,
  rootGraphOf,
  storeView,
  type AnswerBatch,
  type AnswerOutcome,
  type BatchesOutcome,
  type EveryCapabilityStore,
  type InterruptPage,
  type LadderStepWrite,
  type LeaseReadResults,
  type PendingPage,
  type StoredInterrupt,
} from "@rein/core/store";
import type { ActorType, Decision } from "./names.ts";
import type { ReinMetrics, ResolvedInterrupt } from "./recorder.ts";
import { interruptIdOf } from "../ids.ts";

/** The answer value's decision: the tool-approval convention, `{ approved }`, or a plain value. */
export function decisionOf(value: unknown): Decision {
  if (value === true) return "approve";
  if (value === false) return "reject";
  if (typeof value !== "object" || value === null) return "value";
  const record = value as Record<string, unknown>;
  switch (record["type"] ?? record["decision"]) {
    case "accept":
    case "approve":
      return "approve";
    case "ignore":
    case "reject":
      return "reject";
    case "edit":
      return "edit";
    case "respond":
      return "respond";
  }
  if (record["approved"] === true) return "approve";
  if (record["approved"] === false) return "reject";
  return "value";
}

/** Who resolved a batch: the deadline timer, another `system:` actor, or a person. */
export function actorTypeOf(batch: Pick<AnswerBatch, "action" | "actor">): ActorType {
  if (batch.action === "timeout") return "timer";
  return batch.actor.startsWith("system:") ? "system" : "human";
}

/** What an observation needs of one interrupt. */
export interface AskedInterrupt {
  createdAt: string;
  /** Root graph of its run tree. */
  graph: string;
}

/** How many interrupts the view remembers (the oldest are forgotten first). */
const REMEMBERED = 10_000;

/** The interrupts read through the view, by id: their creation time and root graph. */
export class SeenInterrupts {
  readonly #seen = new Map<string, AskedInterrupt>();

  /** Remembers records a read returned. */
  add(records: readonly (StoredInterrupt | undefined)[] | undefined): void {
    for (const record of records ?? []) {
      if (!record) continue;
      this.#seen.delete(record.id);
      this.#seen.set(record.id, { createdAt: record.createdAt, graph: rootGraphOf(record) });
    }
    for (const id of this.#seen.keys()) {
      if (this.#seen.size <= REMEMBERED) break;
      this.#seen.delete(id);
    }
  }

  /** The page, remembering its items when the caller decodes them (never decoding them itself). */
  page<P extends PendingPage | undefined>(page: P): P {
    if (!page) return page;
    const add = (items: StoredInterrupt[]): void => this.add(items);
    let added = false;
    return {
      get items(): StoredInterrupt[] {
        const items = page.items;
        if (!added) add(items);
        added = true;
        return items;
      },
      total: page.total,
    } as P;
  }

  /** The remembered interrupt of `id`, kept (it is still pending). */
  peek(id: string): AskedInterrupt | undefined {
    return this.#seen.get(id);
  }

  /** The remembered interrupt of `id` (forgotten now: it was answered). */
  take(id: string): AskedInterrupt | undefined {
    const asked = this.#seen.get(id);
    this.#seen.delete(id);
    return asked;
  }
}

/**
 * What one applied batch resolved: the answered ids (but those that only gained an approval,
 * `recorded`) and the cancelled ones, with what was asked of each.
 */
export function resolvedBy(
  batch: AnswerBatch,
  recorded: readonly string[],
  asked: ReadonlyMap<string, AskedInterrupt>,
  at: number,
): ResolvedInterrupt[] {
  const actorType = actorTypeOf(batch);
  const waiting = new Set(recorded);
  const resolved: ResolvedInterrupt[] = [];
  const add = (id: string, decision: Decision): void => {
    const interrupt = asked.get(id);
    if (!interrupt) return;
    const seconds = Math.max(0, (at - Date.parse(interrupt.createdAt)) / 1000);
    resolved.push({ graph: interrupt.graph, decision, actorType, seconds });
  };
  for (const answer of batch.answers)
    if (!waiting.has(answer.id))
      add(answer.id, batch.action === "timeout" ? "timeout" : decisionOf(answer.value));
  for (const id of batch.cancel ?? []) add(id, batch.action === "timeout" ? "timeout" : "cancel");
  return resolved;
}

/** The ids a batch names (answers and cancellations). */
function idsOf(batch: AnswerBatch): string[] {
  return [...batch.answers.map((a) => a.id as string), ...(batch.cancel ?? [])];
}

/** Records an applied batch: what it resolved, with what the view remembers of each id. */
function observer(store: Checkpointer, metrics: ReinMetrics, seen: SeenInterrupts) {
  return (batch: AnswerBatch, recorded: readonly InterruptId[] | undefined): void => {
    const at = Date.now();
    const asked = new Map<string, AskedInterrupt>();
    const unknown: InterruptId[] = [];
    for (const id of idsOf(batch)) {
      const known = seen.take(id);
      if (known) asked.set(id, known);
      else unknown.push(interruptIdOf(id));
    }
    if (unknown.length === 0) {
      metrics.answered(resolvedBy(batch, recorded ?? [], asked, at));
      return;
    }
    // Not read through the view: one read by id, off the caller's path.
    metrics.track(
      store.getInterrupts(unknown).then((rows) => {
        for (const row of rows)
          asked.set(row.id, { createdAt: row.createdAt, graph: rootGraphOf(row) });
        metrics.answered(resolvedBy(batch, recorded ?? [], asked, at));
      }),
    );
  };
}

/** The store's reads that return interrupts, remembering them in `seen`. */
function rememberingReads(
  store: Checkpointer,
  seen: SeenInterrupts,
): Partial<EveryCapabilityStore> {
  const remembered = (records: StoredInterrupt[]): StoredInterrupt[] => {
    seen.add(records);
    return records;
  };
  const reads: Partial<EveryCapabilityStore> = {
    getInterrupt: async (id) => {
      const record = await store.getInterrupt(id);
      seen.add([record]);
      return record;
    },
    getInterrupts: async (ids) => remembered(await store.getInterrupts(ids)),
    getThreadInterrupts: async (threadId, status) =>
      remembered(await store.getThreadInterrupts(threadId, status)),
    getTaskInterrupts: async (threadId, taskIds) =>
      remembered(await store.getTaskInterrupts(threadId, taskIds)),
    listExpiredInterrupts: async (now, limit) =>
      remembered(await store.listExpiredInterrupts(now, limit)),
    listInterrupts: async (query): Promise<InterruptPage> => {
      const page = await store.listInterrupts(query);
      seen.add(page.items);
      return page;
    },
    getPendingInterrupts: async (threadId, limit) =>
      seen.page(await store.getPendingInterrupts(threadId, limit)),
    putTaskOutcome: async (outcome) => {
      const page = await store.putTaskOutcome(outcome);
      return page ? seen.page(page) : page;
    },
  };
  if (hasCapability(store, "leaseReads")) {
    const acquire = store.acquireLeaseAndRead.bind(store);
    reads.acquireLeaseAndRead = async (threadId, owner, ttlMs, asked) => {
      const taken = await acquire(threadId, owner, ttlMs, asked);
      if (!taken) return taken;
      seen.add(taken.reads.interrupts);
      seen.add(taken.reads.runPending);
      if (!taken.reads.pending) return taken;
      const read: LeaseReadResults = { ...taken.reads, pending: seen.page(taken.reads.pending) };
      return { token: taken.token, reads: read };
    };
  }
  return reads;
}

/**
 * The store, with each applied answer batch recorded in `metrics`, and the reads that return
 * interrupts remembered for that (see the module comment).
 */
export function observeAnswers(store: Checkpointer, metrics: ReinMetrics): Checkpointer {
  const seen = new SeenInterrupts();
  const observe = observer(store, metrics, seen);
  // The writes observed and the reads remembered; every other member is the store's own.
  const wrapped: Partial<EveryCapabilityStore> = {
    ...rememberingReads(store, seen),
    answerInterrupts: async (batch: AnswerBatch): Promise<AnswerOutcome> => {
      const outcome = await store.answerInterrupts(batch);
      if (outcome.ok) observe(batch, outcome.recorded);
      return outcome;
    },
  };
  // A ladder step taken by this process's deadline timer (the store's conditional write makes
  // it once across processes, so counting here counts each step once).
  wrapped.takeLadderStep = async (step: LadderStepWrite): Promise<boolean> => {
    const taken = await store.takeLadderStep(step);
    if (taken)
      metrics.escalated(
        step.stage === "reminded" ? "remind" : "escalate",
        seen.peek(step.id)?.graph ?? "",
      );
    return taken;
  };
  if (store.answerBatches) {
    const answerBatches = store.answerBatches.bind(store);
    wrapped.answerBatches = async (batches: readonly AnswerBatch[]): Promise<BatchesOutcome> => {
      const outcome = await answerBatches(batches);
      if (outcome.ok)
        batches.forEach((batch, index) => observe(batch, outcome.outcomes[index]?.recorded));
      return outcome;
    };
  }
  return storeView(store, wrapped);
}
