/**
 * Changes made outside this layer's own runs, relayed to the thread's open v2 streams: an
 * answer given in the console, in Slack or through the native or legacy API, and the run it
 * continued. When the server tells that a thread's interrupts may have changed, the pending
 * questions are compared with what the streams were last told: the ones gone are
 * `input.answered`, the new ones `input.requested`, then the values and the root's status.
 */
import { ThreadIdSchema } from "@rein/wire";
import type { ServerContext } from "../../context.ts";
import { latestMetadata } from "../../thread-access.ts";
import { messagesOut } from "../mapping/messages.ts";
import type { ThreadEventLogs } from "./event-log.ts";
import { agentStatusOf, inputRequested } from "./mapping.ts";

/** Relays one thread's change, if any stream of this process listens and no own run is going. */
async function relay(ctx: ServerContext, logs: ThreadEventLogs, threadId: string): Promise<void> {
  const log = logs.peek(threadId);
  if (!log?.listened || log.running) return;
  const id = ThreadIdSchema.safeParse(threadId);
  if (!id.success) return;
  const thread = await ctx.store.getThread(id.data);
  if (!thread) return;
  const graph = await ctx.registry.forThread(ctx.store, thread);
  const [latest, state] = await Promise.all([
    latestMetadata(ctx.store, thread.threadId),
    graph.getState({ threadId: thread.threadId }),
  ]);
  // A run of this layer may have started meanwhile: it reports for itself.
  if (log.running) return;
  const pending = latest.pendingInterrupts;
  const now = new Set(pending.map((i) => i.id as string));
  const answered = [...log.pending].filter((id) => !now.has(id));
  const asked = pending.filter((i) => !log.pending.has(i.id));
  if (answered.length === 0 && asked.length === 0) return;
  log.pending = now;
  if (answered.length > 0) log.emit("input.answered", [], { interrupt_ids: answered });
  log.emit("values", [], messagesOut(state.values));
  for (const interrupt of asked) {
    const e = inputRequested(interrupt);
    log.emit(e.method, e.namespace, e.data);
  }
  if (latest.runStatus === null || latest.runStatus === "running" || latest.runStatus === "queued")
    return;
  log.emit("lifecycle", [], {
    event: agentStatusOf(latest.runStatus, pending.length > 0),
    graph_name: graph.name,
  });
}

/**
 * Subscribes to the server's change notices (this process's runs, and other processes' on
 * Postgres). Returns the unsubscribe.
 */
export function bridgeChanges(
  ctx: ServerContext,
  logs: ThreadEventLogs,
  onError: (error: unknown) => void,
): () => void {
  return ctx.runs.onChange((threadId) => {
    relay(ctx, logs, threadId).catch(onError);
  });
}
