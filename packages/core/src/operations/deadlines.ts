/**
 * Deadlines: resolving pending interrupts whose deadline passed — answered with their
 * `onTimeout` value or their task cancelled — and continuing the affected threads, once or on a
 * timer. Interrupts are matched to a graph by name, so a store may hold several graphs' threads.
 */
import { requireCapability } from "../checkpoint/capabilities.ts";
import type { DeadlineTimerStore, RuntimeStore, StoredInterrupt } from "../checkpoint/types.ts";
import { silentSink } from "../engine/events.ts";
import { runRoot } from "../engine/root.ts";
import type { GraphDefinition } from "../graph/definition.ts";
import type { ThreadId } from "../ids.ts";
import { tasksToWake } from "./wake.ts";
import type { LeaseSettings } from "../graph/options.ts";
import { openSession } from "../thread/session.ts";
import { dueStep, ladderStepWrite } from "../interrupts/ladder.ts";

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
  store: RuntimeStore,
  lease: LeaseSettings,
  now: Date,
): Promise<number> {
  const timer = requireCapability(store, "deadlineTimer", "the deadline timer");
  let expired = await timer.listExpiredInterrupts(now.toISOString(), 500);
  // Ladder steps first: a process that comes late takes every step that fell due (each once,
  // in order) before the deadline resolves the question. A round with none due reads once.
  if (expired.some((record) => owns(definition, record) && dueStep(record).kind !== "timeout")) {
    await takeLadderSteps(definition, timer, now, expired);
    expired = await timer.listExpiredInterrupts(now.toISOString(), 500);
  }
  const byThread = new Map<ThreadId, StoredInterrupt[]>();
  for (const record of expired) {
    // A store may hold threads of several graphs: continue only those this graph owns.
    if (!owns(definition, record)) continue;
    // A step another timer has not finished yet is left for the next round.
    if (dueStep(record).kind !== "timeout") continue;
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

function owns(definition: GraphDefinition, record: StoredInterrupt): boolean {
  return (record.path[0]?.graph ?? record.graph) === definition.name;
}

/**
 * Takes every escalation-ladder step of `definition`'s graph due at `now` (reminders, then the
 * escalation), each in its own transaction conditional on the step still being due, so of
 * several processes' timers exactly one takes each step. Steps neither need the thread's lease
 * nor continue the run: they notify, widen who may answer and leave the question pending.
 *
 * @returns how many steps this call took.
 */
export async function takeLadderSteps(
  definition: GraphDefinition,
  store: RuntimeStore & DeadlineTimerStore,
  now: Date,
  /** The due rows, when the caller just read them (the first round reads none then). */
  read?: readonly StoredInterrupt[],
): Promise<number> {
  let taken = 0;
  // A late process may find several steps of one question due: each round takes the next.
  for (let round = 0; round < 8; round++) {
    const rows =
      round === 0 && read ? read : await store.listExpiredInterrupts(now.toISOString(), 500);
    const due = rows.filter(
      (record) => owns(definition, record) && dueStep(record).kind !== "timeout",
    );
    if (due.length === 0) break;
    let progressed = 0;
    for (const record of due) {
      const step = dueStep(record);
      if (step.kind === "timeout") continue;
      const ladder = requireCapability(store, "escalationLadder", "an escalation ladder");
      if (await ladder.takeLadderStep(ladderStepWrite(record, step, now))) progressed += 1;
    }
    taken += progressed;
    if (progressed === 0) break;
  }
  return taken;
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
