/**
 * Deadlines: resolving pending interrupts whose deadline passed — answered with their
 * `onTimeout` value or their task cancelled — and continuing the affected threads, once or on a
 * timer. Interrupts are matched to a graph by name, so a store may hold several graphs' threads.
 */
import type { Checkpointer, StoredInterrupt } from "../checkpoint/types.ts";
import { silentSink } from "../engine/events.ts";
import { runRoot } from "../engine/root.ts";
import type { GraphDefinition } from "../graph/definition.ts";
import type { ThreadId } from "../ids.ts";
import { tasksToWake } from "../resume/wake.ts";
import type { LeaseSettings } from "../thread/lease.ts";
import { openSession } from "../thread/session.ts";

/** The actor deadline answers are recorded under. */
const TIMER = "system:timer";

/**
 * Resolves every pending interrupt of `definition`'s graph past its deadline at `now` and
 * continues the affected threads, each under its lease like a person's answer.
 *
 * @returns how many interrupts it resolved.
 */
export async function resolveExpiredInterrupts(
  definition: GraphDefinition,
  store: Checkpointer,
  lease: LeaseSettings,
  now: Date,
): Promise<number> {
  const expired = await store.listExpiredInterrupts(now.toISOString(), 500);
  const byThread = new Map<ThreadId, StoredInterrupt[]>();
  for (const record of expired) {
    // A store may hold threads of several graphs: continue only those this graph owns.
    if ((record.path[0]?.graph ?? record.graph) !== definition.name) continue;
    byThread.set(record.threadId, [...(byThread.get(record.threadId) ?? []), record]);
  }
  let resolved = 0;
  for (const [threadId, records] of byThread)
    resolved += await openSession(store, threadId, lease, TIMER, async (session) => {
      let answered = 0;
      for (const record of records) {
        const onTimeout = record.onTimeout ?? { kind: "cancel" };
        const outcome = await session.store.answerInterrupts({
          threadId,
          answers:
            onTimeout.kind === "value" ? [{ id: record.id, value: onTimeout.value ?? null }] : [],
          cancel: onTimeout.kind === "cancel" ? [record.id] : [],
          wake: await tasksToWake(session, [record]),
          actor: TIMER,
          action: "timeout",
        });
        if (outcome.ok) answered += 1;
      }
      if (answered > 0)
        await runRoot(definition, session, null, { threadId, actor: TIMER }, silentSink);
      return answered;
    });
  return resolved;
}

/** A running deadline timer. */
export interface DeadlineTimer {
  /** Stops the timer (a resolution in progress finishes). */
  stop(): void;
  /** The first resolution's count, or its failure. */
  ready: Promise<number>;
}

/**
 * Runs `resolve` now and then every `intervalMs` (default 1 s), one at a time, until stopped. The
 * timer does not keep the process alive; a failed round goes to `onError` and the next one runs.
 */
export function startDeadlineTimer(
  resolve: () => Promise<number>,
  options: { intervalMs?: number; onError?: (error: unknown) => void } = {},
): DeadlineTimer {
  let running: Promise<unknown> = Promise.resolve();
  const tick = (): Promise<number> => {
    const next = running.then(resolve);
    running = next.catch((error: unknown) => options.onError?.(error));
    return next;
  };
  const ready = tick();
  const timer = setInterval(() => void tick().catch(() => undefined), options.intervalMs ?? 1000);
  timer.unref();
  return { stop: () => clearInterval(timer), ready };
}
