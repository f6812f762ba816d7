/**
 * Following a run this layer started: its hub's events become the thread's protocol events, and
 * its end announces what is pending now: the root's values when it streamed none (a targeted
 * answer streams its sub-agent's), and the still-pending siblings (`input.requested`, same ids).
 */
import type { Interrupt, RunResult, StreamEvent, ThreadId } from "@rein/core";
import type { ServerContext } from "../../context.ts";
import type { HubEvent } from "../../hub.ts";
import type { ActiveRun } from "../../run-manager.ts";
import { messagesOut } from "../mapping/messages.ts";
import type { ThreadEventLog } from "./event-log.ts";
import { agentStatusOf, inputRequested, RunTranslator, type Emission } from "./mapping.ts";

/** What a followed run needs besides its hub. */
export interface FollowOptions {
  ctx: ServerContext;
  log: ThreadEventLog;
  threadId: ThreadId;
  /** The root graph's name (`lifecycle` events carry it). */
  graphName: string;
  /** Interrupt ids the run answers: `input.answered` goes out once the run got going. */
  answered?: readonly string[];
  /** Called once the run has finished or was refused. */
  done: () => void;
}

function isPrefixOf(prefix: readonly string[], namespace: readonly string[]): boolean {
  return prefix.length <= namespace.length && prefix.every((s, i) => namespace[i] === s);
}

/**
 * Pipes a run's hub into the thread's log, in order (each event is handled after the previous
 * one, the end's store read included).
 */
export function followRun(active: ActiveRun, options: FollowOptions): void {
  const { log } = options;
  const translator = new RunTranslator((ns) => ns[ns.length - 1] ?? options.graphName);
  let begun = false;
  let ended = false;
  let chain: Promise<void> = Promise.resolve();
  const emit = (emissions: readonly Emission[]): void => {
    for (const e of emissions) log.emit(e.method, e.namespace, e.data, e.node);
  };
  const begin = (): void => {
    if (begun) return;
    begun = true;
    log.beginRun();
    if (options.answered && options.answered.length > 0)
      log.emit("input.answered", [], { interrupt_ids: [...options.answered] });
    log.emit("lifecycle", [], { event: "running", graph_name: options.graphName });
  };
  const handle = async (event: HubEvent | null): Promise<void> => {
    if (event === null) {
      // Refused before it started (a stale target, a busy or interrupted thread): nothing ran,
      // and the client that answered dropped the questions from its list; they are still
      // pending, so they are announced again.
      if (!ended && !begun) {
        const pending = await announcePending(options, translator, true);
        options.log.pending = new Set(pending.map((i) => i.id));
      }
      options.done();
      return;
    }
    begin();
    if (event.event === "end") {
      ended = true;
      const result = (event.data as { result: RunResult }).result;
      await finish(options, translator, result, null);
      return;
    }
    if (event.event === "error") {
      ended = true;
      const message = (event.data as { message?: unknown }).message;
      await finish(options, translator, null, typeof message === "string" ? message : "failed");
      return;
    }
    emit(translator.translate(event.data as StreamEvent));
  };
  active.hub.subscribe(0, (event) => {
    chain = chain.then(
      () => handle(event),
      () => handle(event),
    );
  });
}

/** Announces the thread's pending interrupts this run has not announced yet. */
async function announcePending(
  options: FollowOptions,
  translator: RunTranslator,
  withLifecycle: boolean,
): Promise<Interrupt[]> {
  const pending = await options.ctx.store
    .getThreadInterrupts(options.threadId, "pending")
    .catch(() => []);
  for (const interrupt of pending) {
    if (translator.announced.has(interrupt.id)) continue;
    translator.announced.add(interrupt.id);
    const e = inputRequested(interrupt);
    options.log.emit(e.method, e.namespace, e.data);
  }
  if (withLifecycle && pending.length > 0)
    options.log.emit("lifecycle", [], {
      event: "interrupted",
      graph_name: options.graphName,
    });
  return pending;
}

/**
 * The end of a run: open messages closed, final values (when the run streamed none), every
 * pending interrupt announced, then each sub-agent's and the root's terminal `lifecycle`.
 */
async function finish(
  options: FollowOptions,
  translator: RunTranslator,
  result: RunResult | null,
  error: string | null,
): Promise<void> {
  const { log } = options;
  for (const e of translator.finishAll()) log.emit(e.method, e.namespace, e.data, e.node);
  if (result && !translator.sawRootValues) log.emit("values", [], messagesOut(result.values));
  const pending = await announcePending(options, translator, false);
  log.pending = new Set(pending.map((i) => i.id));
  const failed =
    error !== null ||
    (result !== null && result.status !== "done" && result.status !== "interrupted");
  for (const namespace of translator.namespaces.values()) {
    const paused = pending.some((i) => isPrefixOf(namespace, i.namespace));
    log.emit("lifecycle", namespace, {
      event: paused ? "interrupted" : failed ? "failed" : "completed",
      graph_name: namespace[namespace.length - 1] ?? options.graphName,
    });
  }
  const status =
    error !== null ? "failed" : agentStatusOf(result?.status ?? "error", pending.length > 0);
  log.emit("lifecycle", [], {
    event: status,
    graph_name: options.graphName,
    ...(error !== null ? { error } : result?.status === "cancelled" ? { error: "cancelled" } : {}),
  });
}
