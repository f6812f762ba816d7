/**
 * Starting a run from the protocol's run request: the assistant names the graph (a thread
 * without one takes it on its first run), `command.resume` becomes a Rein answer
 * ({@link chooseResume}: a map only by exact match of pending ids, one answer refused while
 * several are pending), input becomes a run of new input (refused while questions are pending),
 * and `multitask_strategy` picks Rein's policy (LangGraph's default `reject`: a busy thread is a
 * 409). Every refusal happens before anything is written.
 */
import { randomUUID } from "node:crypto";
import { InvalidInputError, StaleTargetError, type RunId, type ThreadRecord } from "@rein/core";
import { z } from "zod";
import { answerPrincipal, requireScope, type Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { launch } from "../launch.ts";
import { GraphRegistry, type ServedGraph } from "../registry.ts";
import { buildCommand, type ActiveRun, type RunWork } from "../run-manager.ts";
import { latestMetadata, loadThreadHead, type ThreadHead } from "../thread-access.ts";
import { checkForkPoint } from "./fork-point.ts";
import { NotServedError } from "./http.ts";
import { graphOfAssistant } from "./mapping/assistants.ts";
import { holdsReinMessages, messagesIn } from "./mapping/messages.ts";
import { streamModesOf, wantsTokens } from "./events.ts";
import { chooseResume } from "./mapping/resume.ts";
import { runIdOf } from "../ids.ts";

const Selectors = z.union([z.literal("*"), z.array(z.string().min(1).max(512)).max(100)]);

/** The protocol's run request (`RunCreate`); fields Rein does not act on are accepted and ignored. */
export const LgRunCreate = z
  .object({
    assistant_id: z.string().min(1).max(256),
    input: z.record(z.string(), z.unknown()).nullable().optional(),
    command: z
      .object({
        resume: z.unknown().optional(),
        update: z.unknown().optional(),
        goto: z.unknown().optional(),
      })
      .loose()
      .nullable()
      .optional(),
    stream_mode: z.union([z.string().max(64), z.array(z.string().max(64)).max(16)]).optional(),
    stream_subgraphs: z.boolean().optional(),
    interrupt_before: Selectors.optional(),
    interrupt_after: Selectors.optional(),
    multitask_strategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]).optional(),
    checkpoint_id: z.string().min(1).max(256).optional(),
    checkpoint: z
      .object({ checkpoint_id: z.string().min(1).max(256).nullable().optional() })
      .loose()
      .nullable()
      .optional(),
    on_completion: z.enum(["delete", "keep"]).optional(),
    if_not_exists: z.enum(["create", "reject"]).optional(),
  })
  .loose();

/** A run request as validated. */
export type LgRunRequest = z.infer<typeof LgRunCreate>;

/** A run started (or queued) for a protocol request. */
export interface StartedRun {
  runId: RunId;
  /** The run executing in this process; null when it was queued. */
  active: ActiveRun | null;
  graph: ServedGraph;
}

const selectorsOf = (value: "*" | string[] | undefined): string[] | undefined =>
  value === undefined ? undefined : value === "*" ? ["*"] : value;

/** Whether a graph keeps Rein's own messages (the prebuilt agent's model → tools loop). */
function isAgentGraph(graph: ServedGraph): boolean {
  const { nodes, schema } = graph.definition;
  return "messages" in schema && nodes.has("model") && nodes.has("tools");
}

/**
 * The thread with its graph: the graph the assistant names, recorded on a thread that has none
 * yet.
 *
 * @throws NotFoundError for an unknown assistant; InvalidInputError when the thread runs
 *   another graph.
 */
async function bindGraph(
  ctx: ServerContext,
  thread: ThreadRecord,
  assistantId: string,
): Promise<{ thread: ThreadRecord; graph: ServedGraph }> {
  const name = graphOfAssistant(ctx.registry, assistantId);
  const current = await GraphRegistry.graphNameOf(ctx.store, thread);
  if (current === null) {
    const bound = { ...thread, graph: name, updatedAt: new Date().toISOString() };
    await ctx.store.putThread(bound);
    return { thread: bound, graph: ctx.registry.get(name) };
  }
  if (current !== name)
    throw new InvalidInputError(
      `Thread ${thread.threadId} runs graph "${current}"; assistant ${assistantId} is graph "${name}". Start a new thread for another graph.`,
      { threadId: thread.threadId, graph: current, assistant: name },
    );
  return { thread, graph: ctx.registry.get(name) };
}

/** The Rein answer of a `command.resume`, checked against the thread's interrupts. */
async function resumeWorkOf(
  ctx: ServerContext,
  thread: ThreadRecord,
  value: unknown,
  principal: Principal,
): Promise<RunWork> {
  const threadId = thread.threadId;
  const pending = await ctx.store.getThreadInterrupts(threadId, "pending");
  // Every interrupt of the thread is read only for an object that is not a map of pending ids:
  // to tell a consumed id from data.
  const ids = new Set<string>(pending.map((i) => i.id));
  const keys = typeof value === "object" && value !== null ? Object.keys(value) : [];
  const known =
    keys.length > 0 && !keys.every((key) => ids.has(key))
      ? await ctx.store.getThreadInterrupts(threadId)
      : [];
  const choice = chooseResume(value, pending, known);
  if (choice.kind === "stale") {
    const latest = await latestMetadata(ctx.store, threadId);
    const reason = `Interrupt ${choice.ids.join(", ")} is not pending on thread ${threadId}.`;
    throw new StaleTargetError(
      `${reason} Nothing was applied; re-read the thread and answer again.`,
      {
        threadId,
        runId: latest.runId,
        runStatus: latest.runStatus,
        headCheckpointId: latest.headCheckpointId,
        pendingInterrupts: latest.pendingInterrupts,
        reason,
      },
    );
  }
  const fields = choice.kind === "one" ? { resume: choice.value } : { resumeMap: choice.answers };
  return {
    kind: "resume",
    command: buildCommand(fields, choice.kind === "one", answerPrincipal(principal), undefined),
    target: null,
  };
}

/**
 * Starts the run a protocol request asks for on `thread` and waits until it got going (so a
 * refusal is an error response, not an event).
 *
 * @throws NotFoundError, InvalidInputError, AmbiguousResumeError, StaleTargetError,
 *   ThreadInterruptedError, ThreadBusyError, NotServedError.
 */
export async function startLgRun(
  ctx: ServerContext,
  principal: Principal,
  of: ThreadRecord,
  body: LgRunRequest,
  known?: ThreadHead,
): Promise<StartedRun> {
  const command = body.command ?? null;
  if (command && ((command.update ?? null) !== null || (command.goto ?? null) !== null))
    throw new NotServedError(
      "command.update and command.goto",
      "Rein answers interrupts with command.resume; edit state with POST /threads/{id}/state.",
    );
  const input = body.input ?? null;
  if (command && input !== null)
    throw new InvalidInputError("Send `input` or `command`, not both.");
  // Time travel: `checkpoint_id` (or `checkpoint.checkpoint_id`) runs the thread again from that
  // root checkpoint, Rein's fork, as v2's `forkFrom` does.
  const forkFrom = body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? undefined;
  if (forkFrom !== undefined && command)
    throw new NotServedError(
      "Resuming at a past checkpoint (command with checkpoint_id)",
      "answer the pending questions at the thread's head, or run from the checkpoint with input.",
    );
  // Checked before the thread takes a graph: a refused fork writes nothing.
  if (forkFrom !== undefined) await checkForkPoint(ctx.store, of.threadId, forkFrom);
  const { thread, graph } = await bindGraph(ctx, of, body.assistant_id);
  // A stream asking for `messages-tuple` gets a model's tokens: only then does the run stream them.
  const streamMessages =
    body.stream_mode !== undefined && wantsTokens(streamModesOf(body.stream_mode));
  const options = {
    interruptBefore: selectorsOf(body.interrupt_before),
    interruptAfter: selectorsOf(body.interrupt_after),
    streamMessages,
  };
  let active: ActiveRun;
  if (command && Object.hasOwn(command, "resume")) {
    requireScope(principal, "resume");
    const work = await resumeWorkOf(ctx, thread, command.resume, principal);
    // The head the route read with the thread (an answer never binds a graph: the thread has
    // one since the run that asked), else read here.
    const head =
      known && known.thread === of
        ? { ...known, thread }
        : await loadThreadHead(ctx.store, principal, thread.threadId);
    active = await launch(ctx, principal, head, work, { streamMessages });
    // Whoever needs the outcome awaits it; a refusal reaches the caller through `started`.
    active.result.catch(() => undefined);
  } else {
    let values = input;
    // Only input carrying messages is looked at (one state read, and only for a graph that is
    // not the prebuilt agent).
    if (values !== null && "messages" in values) {
      const rein =
        isAgentGraph(graph) ||
        holdsReinMessages((await graph.getState({ threadId: thread.threadId })).values);
      values = messagesIn(values, rein);
    }
    const strategy = body.multitask_strategy ?? "reject";
    // A fork is never queued: a busy thread refuses it (409 thread_busy) whatever the strategy.
    if (forkFrom === undefined && values !== null && strategy !== "reject") {
      graph.checkSelectors({
        ...(options.interruptBefore ? { interruptBefore: options.interruptBefore } : {}),
        ...(options.interruptAfter ? { interruptAfter: options.interruptAfter } : {}),
      });
      const record = await ctx.background.admit(thread, graph, {
        input: values,
        multitask: strategy,
        requestId: `lg:${randomUUID()}`,
        actor: principal.subject,
        interruptBefore: options.interruptBefore,
        interruptAfter: options.interruptAfter,
      });
      return { runId: record.runId, active: null, graph };
    }
    const at = forkFrom === undefined ? options : { ...options, checkpointId: forkFrom };
    active = await launch(ctx, principal, thread, { kind: "input", input: values }, at);
    active.result.catch(() => undefined);
  }
  await active.started;
  // An answer changed the pending questions at its start (the console and v2 streams hear it);
  // new input changes them only when it pauses or ends, which the run manager tells itself.
  if (command) ctx.runs.notifyChange(thread.threadId);
  return { runId: runIdOf(active.hub.runId), active, graph };
}
