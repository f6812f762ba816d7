/**
 * The v2 commands, each a mapping onto an operation Rein already has: `run.start` is a run with
 * input, `input.respond` a targeted resume (a batch: one resume map, all or nothing),
 * `input.inject` steering, `state.get` the thread's state, `state.fork` a run from a past
 * checkpoint, `agent.getTree` the run tree.
 */
import {
  NotFoundError,
  type Interrupt,
  type InterruptId,
  type RunRecord,
  type ThreadId,
  type ThreadRecord,
} from "@rein/core";
import type { z } from "zod";
import { answerPrincipal, requireScope, type Principal } from "../../auth.ts";
import type { ServerContext } from "../../context.ts";
import { launch } from "../../launch.ts";
import { GraphRegistry } from "../../registry.ts";
import { buildCommand, type RunWork } from "../../run-manager.ts";
import { canSee, loadThread } from "../../thread-access.ts";
import { checkForkPoint } from "../fork-point.ts";
import { ProtocolRefusal } from "./errors.ts";
import type { ThreadEventLogs } from "./event-log.ts";
import { followRun } from "./follow.ts";
import { agentStatusOf, sameNamespace } from "./mapping.ts";
import type { AgentTreeNode } from "./protocol.ts";
import {
  ForkConfig,
  GetTreeParams,
  InputInjectParams,
  InputRespondMany,
  InputRespondOne,
  ListCheckpointsParams,
  RunStartParams,
  StateForkParams,
  StateGetParams,
} from "./schemas.ts";

/** What every command handler gets. */
export interface CommandScope {
  ctx: ServerContext;
  logs: ThreadEventLogs;
  principal: Principal;
  threadId: ThreadId;
}

/**
 * What a command answers: its result, and for one that starts a run the seq of the thread's last
 * event before the run (`meta.applied_through_seq`: the client takes later events as live).
 */
export interface CommandOutcome {
  result: Record<string, unknown>;
  appliedThroughSeq?: number;
}

type Handler = (scope: CommandScope, params: unknown) => Promise<CommandOutcome>;

/**
 * Validates params against a schema.
 *
 * @throws ProtocolRefusal (400 `invalid_argument`) naming the first bad field.
 */
function parse<T extends z.ZodType>(schema: T, params: unknown, method: string): z.infer<T> {
  const result = schema.safeParse(params ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "params";
  throw new ProtocolRefusal(
    400,
    "invalid_argument",
    `${method}: ${where}: ${issue?.message ?? "invalid"}.`,
    { issues: result.error.issues.slice(0, 10).map((i) => ({ path: i.path, message: i.message })) },
  );
}

/** Starts following a launched run and waits until it got going (or was refused). */
async function startAndFollow(
  scope: CommandScope,
  thread: ThreadRecord,
  work: RunWork,
  answered?: readonly string[],
  checkpointId?: string,
): Promise<CommandOutcome> {
  const log = scope.logs.of(scope.threadId);
  const appliedThroughSeq = log.lastSeq;
  const release = scope.logs.hold(scope.threadId);
  const finished = log.runStarted();
  const graphName =
    (await GraphRegistry.graphNameOf(scope.ctx.store, thread)) ?? thread.graph ?? "graph";
  let active;
  try {
    // Tokens stream: the v2 client renders a model's reply as it comes.
    active = await launch(scope.ctx, scope.principal, thread, work, {
      streamMessages: true,
      ...(checkpointId !== undefined ? { checkpointId } : {}),
    });
  } catch (error) {
    finished();
    release();
    throw error;
  }
  followRun(active, {
    ctx: scope.ctx,
    log,
    threadId: scope.threadId,
    graphName,
    ...(answered ? { answered } : {}),
    done: () => {
      finished();
      release();
    },
  });
  await active.started;
  return { result: { run_id: active.hub.runId }, appliedThroughSeq };
}

/**
 * `run.start`: new input on the thread (created on first use, with `assistant_id` as its graph,
 * as the protocol lets a client name a fresh thread id). Input to a thread with pending
 * interrupts is refused (409 `thread_interrupted`), never taken as an answer.
 */
const runStart: Handler = async (scope, raw) => {
  const params = parse(RunStartParams, raw, "run.start");
  requireScope(scope.principal, "run");
  const { ctx, principal, threadId } = scope;
  let thread = await ctx.store.getThread(threadId);
  if (thread && !canSee(principal, thread.tenant)) throw new NotFoundError("thread", threadId);
  // The SDK sends `forkFrom` (time travel) as `config.configurable.checkpoint_id`.
  const forkFrom = ForkConfig.safeParse(params.config ?? {}).data?.configurable?.checkpoint_id;
  if (!thread && forkFrom !== undefined) throw noSuchCheckpoint(threadId, forkFrom);
  if (!thread) {
    ctx.registry.get(params.assistant_id);
    const now = new Date().toISOString();
    await ctx.store.putThread({
      threadId,
      tenant: principal.tenant,
      metadata: { ...(params.metadata ?? {}), graph_id: params.assistant_id },
      graph: params.assistant_id,
      createdAt: now,
      updatedAt: now,
    });
    thread = await loadThread(ctx.store, principal, threadId);
  } else {
    const graph = await GraphRegistry.graphNameOf(ctx.store, thread);
    // A served graph's name that is not the thread's is a mistake; any other id (an assistant
    // UUID) stands for the thread's own graph.
    if (
      graph &&
      params.assistant_id !== graph &&
      ctx.registry.names().includes(params.assistant_id)
    )
      throw new ProtocolRefusal(
        400,
        "invalid_argument",
        `Thread ${threadId} runs graph "${graph}", not "${params.assistant_id}"; start another thread for it.`,
        { graph },
      );
  }
  if (forkFrom !== undefined) return fork(scope, thread, forkFrom, params.input ?? null);
  return startAndFollow(scope, thread, { kind: "input", input: params.input ?? null });
};

/** The refusal of a checkpoint the thread does not have (404 `no_such_checkpoint`). */
function noSuchCheckpoint(threadId: string, checkpointId: string): ProtocolRefusal {
  return new ProtocolRefusal(
    404,
    "no_such_checkpoint",
    `Thread ${threadId} has no checkpoint ${checkpointId}; list them with state.listCheckpoints.`,
    { checkpointId },
  );
}

/**
 * A new run of the thread from one of its past root checkpoints (Rein's fork): `input` applied
 * to that checkpoint's state, or with `null` that checkpoint's next step run again. The thread's
 * head moves to the new branch; the history keeps the earlier one.
 *
 * @throws NotFoundError (404 `no_such_checkpoint`) for a checkpoint the thread does not have;
 *   ThreadInterruptedError (409 `invalid_argument`, `details.code: thread_interrupted`) while
 *   the thread waits on answers ({@link checkForkPoint}).
 */
async function fork(
  scope: CommandScope,
  thread: ThreadRecord,
  checkpointId: string,
  input: Record<string, unknown> | null,
): Promise<CommandOutcome> {
  await checkForkPoint(scope.ctx.store, scope.threadId, checkpointId);
  return startAndFollow(scope, thread, { kind: "input", input }, undefined, checkpointId);
}

/**
 * `state.fork` `{ checkpoint_id, input? }`: a run from that checkpoint of the thread (see
 * {@link fork}), answered with `{ run_id, thread_id }` once it got going.
 */
const stateFork: Handler = async (scope, raw) => {
  const params = parse(StateForkParams, raw, "state.fork");
  requireScope(scope.principal, "run");
  const thread = await loadThread(scope.ctx.store, scope.principal, scope.threadId);
  const outcome = await fork(scope, thread, params.checkpoint_id, params.input ?? null);
  return { ...outcome, result: { ...outcome.result, thread_id: scope.threadId } };
};

/**
 * The pending interrupt an answer names.
 *
 * @throws ProtocolRefusal `no_such_interrupt`: 404 when the thread never asked it, 409 when it
 *   is no longer pending (answered, cancelled, superseded), 404 when it is at another namespace.
 */
async function pendingInterrupt(
  scope: CommandScope,
  id: InterruptId,
  namespace: readonly string[],
): Promise<Interrupt> {
  const interrupt = await scope.ctx.store.getInterrupt(id);
  if (!interrupt || interrupt.threadId !== scope.threadId)
    throw new ProtocolRefusal(
      404,
      "no_such_interrupt",
      `Thread ${scope.threadId} has no interrupt ${id}; read its pending interrupts and answer one of them.`,
      { interruptId: id },
    );
  if (interrupt.status !== "pending") {
    const pending = await scope.ctx.store.getThreadInterrupts(scope.threadId, "pending");
    throw new ProtocolRefusal(
      409,
      "no_such_interrupt",
      `Interrupt ${id} is ${interrupt.status}, not pending: nothing was applied. Re-read the thread and decide again.`,
      {
        code: "stale_target",
        interruptId: id,
        status: interrupt.status,
        pendingInterrupts: pending.map((i) => ({ id: i.id, namespace: i.namespace })),
      },
    );
  }
  if (!sameNamespace(interrupt.namespace, namespace))
    throw new ProtocolRefusal(
      404,
      "no_such_interrupt",
      `Interrupt ${id} is at namespace [${interrupt.namespace.join(", ")}], not [${namespace.join(", ")}].`,
      { interruptId: id, namespace: interrupt.namespace },
    );
  return interrupt;
}

/**
 * `input.respond`: one answer resumes only the task that asked (a targeted resume: a paused
 * sibling is not re-run and stays pending); a batch answers all its interrupts in one resume,
 * or none of them.
 */
const inputRespond: Handler = async (scope, raw) => {
  const many = typeof raw === "object" && raw !== null && Object.hasOwn(raw, "responses");
  const params = many
    ? { ...parse(InputRespondMany, raw, "input.respond"), many: true as const }
    : { ...parse(InputRespondOne, raw, "input.respond"), many: false as const };
  requireScope(scope.principal, "resume");
  const thread = await loadThread(scope.ctx.store, scope.principal, scope.threadId);
  if (params.update !== undefined || params.goto !== undefined)
    throw new ProtocolRefusal(
      400,
      "not_supported",
      "input.respond: `update` and `goto` are not applied alongside an answer by this server; send the answer alone.",
    );
  const who = answerPrincipal(scope.principal);
  if (!params.many) {
    if (!Object.hasOwn(params, "response"))
      throw new ProtocolRefusal(400, "invalid_argument", "input.respond: `response` is required.");
    const interrupt = await pendingInterrupt(scope, params.interrupt_id, params.namespace);
    // A sub-agent's question is answered by a targeted resume of its run (its sibling is not
    // touched). A root question is answered by a map of that one id, which runs only its task
    // too, and streams the continued run (a targeted resume reports its end only).
    const work: RunWork =
      interrupt.namespace.length === 0
        ? {
            kind: "resume",
            command: buildCommand(
              { resumeMap: { [interrupt.id]: params.response } },
              false,
              who,
              undefined,
            ),
            target: null,
          }
        : {
            kind: "resume",
            command: buildCommand({ resume: params.response }, true, who, undefined),
            target: {
              runId: interrupt.runId,
              namespace: interrupt.namespace,
              interruptId: interrupt.id,
            },
          };
    return startAndFollow(scope, thread, work, [interrupt.id]);
  }
  const seen = new Set<string>();
  const interrupts: Interrupt[] = [];
  for (const entry of params.responses) {
    if (seen.has(entry.interrupt_id))
      throw new ProtocolRefusal(
        400,
        "invalid_argument",
        `input.respond: interrupt ${entry.interrupt_id} is answered twice in one batch.`,
      );
    seen.add(entry.interrupt_id);
    interrupts.push(await pendingInterrupt(scope, entry.interrupt_id, entry.namespace));
  }
  const resumeMap = Object.fromEntries(
    params.responses.map((entry) => [entry.interrupt_id, entry.response]),
  );
  const first = interrupts[0];
  // All in one run and namespace: a targeted resume of that agent alone. Otherwise the whole
  // map in one resume of the thread (core applies all of it or refuses all of it).
  const oneAgent =
    first !== undefined &&
    interrupts.every((i) => i.runId === first.runId && sameNamespace(i.namespace, first.namespace));
  const work: RunWork = {
    kind: "resume",
    command: buildCommand({ resumeMap }, false, who, undefined),
    target: oneAgent ? { runId: first.runId, namespace: first.namespace } : null,
  };
  return startAndFollow(scope, thread, work, [...seen]);
};

/** The latest run of the thread at `namespace` that can still take steering. */
function runAt(runs: readonly RunRecord[], namespace: readonly string[]): RunRecord | undefined {
  const live = runs.filter(
    (r) =>
      sameNamespace(r.namespace, namespace) &&
      (r.status === "running" || r.status === "interrupted" || r.status === "queued"),
  );
  return live.at(-1);
}

/**
 * `input.inject`: Rein steering. The message is recorded as a steering instruction of the run
 * at `namespace` (its own log, audited, never mixed into an answer); node code of that agent's
 * next execution reads it, no other agent does.
 */
const inputInject: Handler = async (scope, raw) => {
  const params = parse(InputInjectParams, raw, "input.inject");
  requireScope(scope.principal, "resume");
  const thread = await loadThread(scope.ctx.store, scope.principal, scope.threadId);
  const run = runAt(await scope.ctx.store.listRuns(scope.threadId), params.namespace);
  if (!run)
    throw new ProtocolRefusal(
      404,
      "no_such_namespace",
      `Thread ${scope.threadId} has no paused or running agent at namespace [${params.namespace.join(", ")}] to steer.`,
      { namespace: params.namespace },
    );
  const graph = await scope.ctx.registry.forThread(scope.ctx.store, thread);
  const record = await graph.steer(
    { runId: run.runId, namespace: run.namespace },
    params.message.content,
    { actor: scope.principal.subject },
  );
  return { result: { steering_id: record.id, run_id: run.runId } };
};

/** `state.get`: the values at the root, or of the sub-agent at `namespace`. */
const stateGet: Handler = async (scope, raw) => {
  const params = parse(StateGetParams, raw, "state.get");
  requireScope(scope.principal, "read");
  const thread = await loadThread(scope.ctx.store, scope.principal, scope.threadId);
  const graph = await scope.ctx.registry.forThread(scope.ctx.store, thread);
  const namespace = params.namespace ?? [];
  const snapshot = await graph.getState(
    { threadId: scope.threadId },
    { subgraphs: namespace.length > 0 },
  );
  let values = snapshot.values;
  let checkpointId = snapshot.checkpointId;
  if (namespace.length > 0) {
    const child = snapshot.subgraphs?.filter((c) => sameNamespace(c.namespace, namespace)).at(-1);
    if (!child)
      throw new ProtocolRefusal(
        404,
        "no_such_namespace",
        `Thread ${scope.threadId} has no agent at namespace [${namespace.join(", ")}].`,
        { namespace },
      );
    values = child.values;
    checkpointId = child.checkpointId;
  }
  const picked = params.keys
    ? Object.fromEntries(Object.entries(values).filter(([k]) => params.keys?.includes(k)))
    : values;
  return {
    result: { values: picked, ...(checkpointId ? { checkpoint: { id: checkpointId } } : {}) },
  };
};

/** `state.listCheckpoints`: the root's checkpoints, newest first. */
const listCheckpoints: Handler = async (scope, raw) => {
  const params = parse(ListCheckpointsParams, raw, "state.listCheckpoints");
  requireScope(scope.principal, "read");
  if (params.namespace && params.namespace.length > 0)
    throw new ProtocolRefusal(
      400,
      "not_supported",
      "state.listCheckpoints lists the root's checkpoints; omit `namespace`.",
    );
  const thread = await loadThread(scope.ctx.store, scope.principal, scope.threadId);
  const graph = await scope.ctx.registry.forThread(scope.ctx.store, thread);
  const history = await graph.getStateHistory(
    { threadId: scope.threadId },
    { limit: params.limit ?? 10, ...(params.before ? { before: params.before } : {}) },
  );
  return {
    result: {
      checkpoints: history.map((s) => ({
        id: s.checkpointId,
        timestamp: s.createdAt,
        step: s.step,
        metadata: s.metadata,
      })),
    },
  };
};

/** `agent.getTree`: the run tree; a run waiting on its own question reads `interrupted`. */
const getTree: Handler = async (scope, raw) => {
  const params = parse(GetTreeParams, raw, "agent.getTree");
  requireScope(scope.principal, "read");
  await loadThread(scope.ctx.store, scope.principal, scope.threadId);
  const runs = await scope.ctx.store.listRuns(scope.threadId);
  const roots = runs.filter((r) => r.parentRunId === null);
  const root = params.run_id ? roots.find((r) => r.runId === params.run_id) : roots.at(-1);
  if (!root)
    throw new ProtocolRefusal(
      404,
      "no_such_run",
      params.run_id
        ? `Thread ${scope.threadId} has no root run ${params.run_id}.`
        : `Thread ${scope.threadId} has no run yet.`,
    );
  const pending = await scope.ctx.store.getThreadInterrupts(scope.threadId, "pending");
  const waiting = new Set(pending.map((i) => i.runId as string));
  const node = (run: RunRecord): AgentTreeNode => ({
    namespace: run.namespace,
    status: agentStatusOf(run.status, waiting.has(run.runId)),
    graph_name: run.graph,
    metadata: { run_id: run.runId },
    children: runs.filter((r) => r.parentRunId === run.runId).map(node),
  });
  return { result: { tree: node(root) } };
};

const refuseSubscription: Handler = () =>
  Promise.reject(
    new ProtocolRefusal(
      400,
      "not_supported",
      "Over HTTP a subscription is an event stream: open POST /threads/:id/stream/events with { channels, namespaces, depth }; closing it unsubscribes. In-band subscription commands belong to the WebSocket transport, which this server does not serve.",
    ),
  );

/** Every command method this layer knows, by name. */
export const COMMANDS: Readonly<Record<string, Handler>> = {
  "run.start": runStart,
  "input.respond": inputRespond,
  "input.inject": inputInject,
  "state.get": stateGet,
  "state.listCheckpoints": listCheckpoints,
  "state.fork": stateFork,
  "agent.getTree": getTree,
  "subscription.subscribe": refuseSubscription,
  "subscription.unsubscribe": refuseSubscription,
  "subscription.reconnect": refuseSubscription,
};
