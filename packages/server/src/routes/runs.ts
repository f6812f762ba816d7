/**
 * Runs: start (wait, background or streamed), list, get with its run tree, and join a running
 * run's event stream.
 */
import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply } from "fastify";
import type { RunRecord, ThreadRecord } from "@rein/core";
import { InvalidInputError, type ThreadId } from "@rein/core";
import { requireScope, type Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { claimRequest, type RequestClaim } from "../idempotency.ts";
import { assertChannels, launch, resumeWork } from "../launch.ts";
import { mountRoutes, route, type Route } from "./define.ts";
import type { RunWork } from "../run-manager.ts";
import {
  JoinQuery,
  RunAcceptedSchema,
  RunListSchema,
  RunParams,
  RunResultSchema,
  RunTreeSchema,
  StartRunBody,
  ThreadParams,
  type RunTreeNode,
  type StartRun,
} from "@rein/wire";
import { openTrackedSse, pipeFollow, pipeHub } from "../streaming.ts";
import { resumePoint, type ResumePoint } from "../attempts.ts";
import { loadRun, loadThread } from "../thread-access.ts";

const SSE_EVENTS =
  "Events: `run` (first, `{ threadId, runId }`), then core stream events named by their `type` (`values`, `updates`, `custom`, `tasks`, `checkpoints`, `debug`, `interrupt`), then `end` (`{ result }`) or `error` (`{ error, message, details }`). Each has an `id` (`<attempt>:<n>`); reconnect with `Last-Event-ID` to resume. Comment lines (`: ping`) keep the connection alive.";

function modesOf(mode: string | string[] | undefined): Set<string> {
  return new Set(mode === undefined ? ["values"] : Array.isArray(mode) ? mode : [mode]);
}

/** The status a 202 reports: `queued` until a process has started the run. */
function acceptedStatus(run: RunRecord): "queued" | "running" {
  return run.status === "queued" ? "queued" : "running";
}

/**
 * Streams a run's events: from this process's hub while it runs here (a single process); from
 * wherever its attempts run (or will run) while it is queued or running, across takeovers and
 * hand-overs, with several processes (or to resume in another attempt than the hub's); its
 * record alone once it has ended.
 */
async function pipeRun(
  ctx: ServerContext,
  reply: FastifyReply,
  run: RunRecord,
  modes: Set<string>,
  from: ResumePoint,
): Promise<void> {
  const hub = ctx.runs.hub(run.runId);
  if (hub && !ctx.scale && (from.attempt === undefined || from.attempt === hub.attempt))
    return pipeHub(ctx, reply, hub, modes, from.after);
  if (
    hub ||
    run.status === "queued" ||
    (run.status === "running" && (ctx.scale || ctx.runs.executing(run.runId)))
  )
    return pipeFollow(ctx, reply, run.threadId, run.runId, modes, from);
  const stream = openTrackedSse(ctx, reply, { "x-rein-run-id": run.runId });
  const { options: _options, ...record } = run;
  stream.send("run", { threadId: run.threadId, runId: run.runId, record }, 0);
  stream.close();
}

/** The run and its descendants, as a tree. */
function runTree(runs: RunRecord[], root: RunRecord): RunTreeNode {
  const children = runs.filter((r) => r.parentRunId === root.runId);
  const { options: _options, ...record } = root;
  return {
    ...record,
    error: record.error ?? null,
    children: children.map((c) => runTree(runs, c)),
  };
}

/** The run work of a start request: its input, or its command (an answer, with the resume scope). */
async function startWork(
  ctx: ServerContext,
  params: { id: ThreadId },
  body: { input?: Record<string, unknown> | null | undefined; command?: unknown },
  raw: unknown,
  principal: Principal,
  claim: RequestClaim | undefined,
): Promise<RunWork> {
  if ((body.input !== undefined) === (body.command !== undefined))
    throw new InvalidInputError(
      "Send exactly one of `input` (state update, or null to continue) and `command` (an answer).",
    );
  if (body.command === undefined)
    return {
      kind: "input",
      input: body.input ?? null,
      requestId: claim?.requestId,
      repeat: claim !== undefined && !claim.first,
    };
  requireScope(principal, "resume");
  const rawCommand = (raw as { command?: unknown }).command;
  return resumeWork(
    ctx,
    params.id,
    body.command as Parameters<typeof resumeWork>[2],
    rawCommand,
    principal,
    claim?.requestId,
  );
}

/**
 * New input that goes through the queue: every background start (its run id must be readable
 * at once, and nothing accepted may be lost), and any start whose multitask policy is not
 * `reject`. Returns the queued (or, for a repeat, the existing) run.
 */
async function queueInput(
  ctx: ServerContext,
  thread: ThreadRecord,
  work: RunWork & { kind: "input" },
  body: StartRun,
  principal: Principal,
): Promise<RunRecord> {
  const graph = await ctx.registry.forThread(ctx.store, thread);
  assertChannels(graph, work.input ?? {});
  // Checked now: a typo in a selector must be a 400, not a queued run that fails later.
  graph.checkSelectors({
    ...(body.interruptBefore ? { interruptBefore: body.interruptBefore } : {}),
    ...(body.interruptAfter ? { interruptAfter: body.interruptAfter } : {}),
  });
  return ctx.background.admit(thread, graph, {
    input: work.input ?? {},
    multitask: body.multitask ?? "reject",
    // Without an Idempotency-Key the run still gets a request id of its own: two processes
    // that both pick the queued run up then cannot run it twice.
    requestId: work.requestId ?? `bg:${randomUUID()}`,
    repeat: work.repeat,
    actor: principal.subject,
    onPending: body.onPending,
    interruptBefore: body.interruptBefore,
    interruptAfter: body.interruptAfter,
  });
}

/** Whether a start goes through the queue rather than straight into a run of this process. */
function queued(work: RunWork, body: StartRun): work is RunWork & { kind: "input" } {
  return (
    work.kind === "input" &&
    work.input !== null &&
    (!body.wait || (body.multitask !== undefined && body.multitask !== "reject"))
  );
}

/** `POST /threads/:id/runs`. */
const startRun = route(
  {
    method: "POST",
    url: "/threads/:id/runs",
    operationId: "startRun",
    summary:
      "Starts a run with `input` (or `null` to continue) or `command` (an answer). `wait: true` answers with the run result; otherwise 202 with the run id, readable at once (`queued` until a process starts it). `multitask` says what happens while the thread runs another run: `reject` (409, the default), `enqueue`, `interrupt`, `rollback`.",
    scope: "run",
    params: ThreadParams,
    body: StartRunBody,
    headers: {
      "Idempotency-Key":
        "A repeat with the same body returns the first outcome (the same run id); the same key with another body is 422 `idempotency_key_reused`.",
    },
    responses: { 200: RunResultSchema, 202: RunAcceptedSchema },
  },
  async ({ ctx, params, body, principal, request }) => {
    const thread = await loadThread(ctx.store, principal, params.id);
    const claim = await claimRequest(
      ctx.store,
      principal,
      params.id,
      request.headers["idempotency-key"],
      "POST /threads/:id/runs",
      request.body,
    );
    const work = await startWork(ctx, params, body, request.body, principal, claim);
    if (queued(work, body)) {
      const run = await queueInput(ctx, thread, work, body, principal);
      request.log.info({ threadId: params.id, runId: run.runId }, "run queued");
      if (body.wait) {
        const requestId = run.options?.queued?.requestId ?? work.requestId ?? "";
        return { status: 200, body: await ctx.background.outcome(run.runId, requestId) };
      }
      return {
        status: 202,
        body: { threadId: params.id, runId: run.runId, status: acceptedStatus(run) },
      };
    }
    const run = await launch(ctx, principal, thread, work, body);
    request.log.info(
      { threadId: params.id, runId: run.hub.runId, wait: body.wait ?? false },
      "run started",
    );
    if (body.wait) return { status: 200, body: await run.result };
    await run.started;
    run.result.catch((error: unknown) =>
      request.log.warn(
        { err: error, threadId: params.id, runId: run.hub.runId },
        "background run failed",
      ),
    );
    return {
      status: 202,
      body: { threadId: params.id, runId: run.hub.runId, status: "running" as const },
    };
  },
);

/** `POST /threads/:id/runs/stream`. */
const streamRun = route(
  {
    method: "POST",
    url: "/threads/:id/runs/stream",
    operationId: "streamRun",
    summary:
      "Starts a run like `POST /threads/:id/runs` and streams its events (SSE); with a `multitask` policy other than `reject` the run is queued and the stream follows it from its start.",
    description: SSE_EVENTS,
    scope: "run",
    params: ThreadParams,
    body: StartRunBody,
    headers: {
      "Idempotency-Key":
        "A repeat with the same body returns the first outcome; the same key with another body is 422 `idempotency_key_reused`.",
    },
    responses: { 200: null },
    sse: true,
  },
  async ({ ctx, params, body, principal, request, reply }) => {
    const thread = await loadThread(ctx.store, principal, params.id);
    const claim = await claimRequest(
      ctx.store,
      principal,
      params.id,
      request.headers["idempotency-key"],
      "POST /threads/:id/runs/stream",
      request.body,
    );
    const work = await startWork(ctx, params, body, request.body, principal, claim);
    const modes = modesOf(body.streamMode);
    if (
      work.kind === "input" &&
      work.input !== null &&
      body.multitask &&
      body.multitask !== "reject"
    ) {
      const queuedRun = await queueInput(ctx, thread, work, body, principal);
      request.log.info({ threadId: params.id, runId: queuedRun.runId }, "run queued, streaming");
      await pipeRun(ctx, reply, queuedRun, modes, { after: 0 });
      return undefined;
    }
    const run = await launch(ctx, principal, thread, work, body);
    run.result.catch(() => undefined);
    // A run refused before it started (stale target, busy thread) answers with a plain error.
    await run.started;
    request.log.info({ threadId: params.id, runId: run.hub.runId }, "run streaming");
    await pipeHub(ctx, reply, run.hub, modes, 0);
    return undefined;
  },
);

/** `GET /threads/:id/runs`. */
const listRuns = route(
  {
    method: "GET",
    url: "/threads/:id/runs",
    operationId: "listRuns",
    summary: "Runs of a thread (root and child runs), oldest first.",
    scope: "read",
    params: ThreadParams,
    responses: { 200: RunListSchema },
  },
  async ({ ctx, params, principal }) => {
    await loadThread(ctx.store, principal, params.id);
    const runs = await ctx.store.listRuns(params.id);
    return {
      status: 200,
      body: { items: runs.map(({ options: _o, ...r }) => ({ ...r, error: r.error ?? null })) },
    };
  },
);

/** `GET /threads/:id/runs/:runId`. */
const getRun = route(
  {
    method: "GET",
    url: "/threads/:id/runs/:runId",
    operationId: "getRun",
    summary: "A run with its run tree (child runs, recursively).",
    scope: "read",
    params: RunParams,
    responses: { 200: RunTreeSchema },
  },
  async ({ ctx, params, principal }) => {
    await loadThread(ctx.store, principal, params.id);
    const run = await loadRun(ctx.store, params.id, params.runId);
    const runs = await ctx.store.listRuns(params.id);
    return { status: 200, body: runTree(runs, run) };
  },
);

/** `GET /threads/:id/runs/:runId/stream`. */
const joinRun = route(
  {
    method: "GET",
    url: "/threads/:id/runs/:runId/stream",
    operationId: "joinRun",
    summary:
      "Joins a run's event stream (SSE). A finished or remote run sends `run` with its record and closes.",
    description: SSE_EVENTS,
    scope: "read",
    params: RunParams,
    query: JoinQuery,
    headers: { "Last-Event-ID": "Resume after this event id." },
    responses: { 200: null },
    sse: true,
  },
  async ({ ctx, params, query, principal, request, reply }) => {
    await loadThread(ctx.store, principal, params.id);
    const run = await loadRun(ctx.store, params.id, params.runId);
    const from = resumePoint(request.headers["last-event-id"]);
    await pipeRun(ctx, reply, run, modesOf(query.streamMode), from);
    return undefined;
  },
);

/** The run routes, one definition each. */
export const runRoutes: readonly Route[] = [startRun, streamRun, listRuns, getRun, joinRun];

/** Registers the run routes. */
export function registerRunRoutes(app: FastifyInstance, ctx: ServerContext): void {
  mountRoutes(app, ctx, runRoutes);
}
