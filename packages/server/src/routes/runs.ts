/**
 * Runs: start (wait, background or streamed), list, get with its run tree, and join a running
 * run's event stream.
 */
import type { FastifyInstance } from "fastify";
import type { RunRecord } from "@rein/core";
import { InvalidInputError, type ThreadId } from "@rein/core";
import { requireScope } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { enqueueRun, launch, requestIdOf, resumeWork } from "../launch.ts";
import { defineRoute } from "../route.ts";
import type { RunWork } from "../runs.ts";
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
} from "../schemas.ts";
import { lastEventId, openTrackedSse, pipeHub, pipeRemote } from "../streaming.ts";
import { loadRun, loadThread } from "../threads.ts";

const SSE_EVENTS =
  "Events: `run` (first, `{ threadId, runId }`), then core stream events named by their `type` (`values`, `updates`, `custom`, `tasks`, `checkpoints`, `debug`, `interrupt`), then `end` (`{ result }`) or `error` (`{ error, message, details }`). Each has an `id`; reconnect with `Last-Event-ID` to resume. Comment lines (`: ping`) keep the connection alive.";

function modesOf(mode: string | string[] | undefined): Set<string> {
  return new Set(mode === undefined ? ["values"] : Array.isArray(mode) ? mode : [mode]);
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

/** Registers the run routes. */
export function registerRunRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { store } = ctx;

  async function startWork(
    params: { id: string },
    body: { input?: Record<string, unknown> | null | undefined; command?: unknown },
    raw: unknown,
    principal: Parameters<typeof requestIdOf>[1],
    idempotencyKey: string | string[] | undefined,
  ): Promise<RunWork> {
    if ((body.input !== undefined) === (body.command !== undefined))
      throw new InvalidInputError(
        "Send exactly one of `input` (state update, or null to continue) and `command` (an answer).",
      );
    if (body.command === undefined)
      return {
        kind: "input",
        input: body.input ?? null,
        requestId: requestIdOf(idempotencyKey, principal, params.id),
      };
    requireScope(principal, "resume");
    const rawCommand = (raw as { command?: unknown }).command;
    return resumeWork(
      ctx,
      params.id,
      body.command as Parameters<typeof resumeWork>[2],
      rawCommand,
      principal,
      requestIdOf(idempotencyKey, principal, params.id),
    );
  }

  defineRoute(
    app,
    ctx,
    {
      method: "POST",
      url: "/threads/:id/runs",
      operationId: "startRun",
      summary:
        "Starts a run with `input` (or `null` to continue) or `command` (an answer). `wait: true` answers with the run result; otherwise 202 with the run id.",
      scope: "run",
      params: ThreadParams,
      body: StartRunBody,
      headers: {
        "Idempotency-Key":
          "A repeat returns the first outcome: of the answer (with `command`), or of the run the input started (with `input`).",
      },
      responses: { 200: RunResultSchema, 202: RunAcceptedSchema },
    },
    async ({ params, body, principal, request }) => {
      const thread = await loadThread(store, principal, params.id);
      const work = await startWork(
        params,
        body,
        request.body,
        principal,
        request.headers["idempotency-key"],
      );
      if (ctx.scale && !body.wait && work.kind === "input" && work.input !== null) {
        const runId = await enqueueRun(ctx, ctx.scale, principal, thread, work.input, body);
        request.log.info({ threadId: params.id, runId }, "run queued");
        return { status: 202, body: { threadId: params.id, runId, status: "running" } };
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
        body: { threadId: params.id, runId: run.hub.runId, status: "running" },
      };
    },
  );

  defineRoute(
    app,
    ctx,
    {
      method: "POST",
      url: "/threads/:id/runs/stream",
      operationId: "streamRun",
      summary: "Starts a run like `POST /threads/:id/runs` and streams its events (SSE).",
      description: SSE_EVENTS,
      scope: "run",
      params: ThreadParams,
      body: StartRunBody,
      headers: {
        "Idempotency-Key":
          "A repeat returns the first outcome: of the answer (with `command`), or of the run the input started (with `input`).",
      },
      responses: { 200: null },
      sse: true,
    },
    async ({ params, body, principal, request, reply }) => {
      const thread = await loadThread(store, principal, params.id);
      const work = await startWork(
        params,
        body,
        request.body,
        principal,
        request.headers["idempotency-key"],
      );
      const run = await launch(ctx, principal, thread, work, body);
      run.result.catch(() => undefined);
      // A run refused before it started (stale target, busy thread) answers with a plain error.
      await run.started;
      request.log.info({ threadId: params.id, runId: run.hub.runId }, "run streaming");
      await pipeHub(ctx, reply, run.hub, modesOf(body.streamMode), 0);
      return undefined;
    },
  );

  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/threads/:id/runs",
      operationId: "listRuns",
      summary: "Runs of a thread (root and child runs), oldest first.",
      scope: "read",
      params: ThreadParams,
      responses: { 200: RunListSchema },
    },
    async ({ params, principal }) => {
      await loadThread(store, principal, params.id);
      const runs = await store.listRuns(params.id as ThreadId);
      return {
        status: 200,
        body: { items: runs.map(({ options: _o, ...r }) => ({ ...r, error: r.error ?? null })) },
      };
    },
  );

  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/threads/:id/runs/:runId",
      operationId: "getRun",
      summary: "A run with its run tree (child runs, recursively).",
      scope: "read",
      params: RunParams,
      responses: { 200: RunTreeSchema },
    },
    async ({ params, principal }) => {
      await loadThread(store, principal, params.id);
      const run = await loadRun(store, params.id, params.runId);
      const runs = await store.listRuns(params.id as ThreadId);
      return { status: 200, body: runTree(runs, run) };
    },
  );

  /**
   * The run; on Postgres a queued run is recorded only once a process takes it, so a join that
   * comes right after the 202 waits a little for it.
   */
  async function loadRunSoon(threadId: string, runId: string) {
    const deadline = Date.now() + (ctx.scale ? 5_000 : 0);
    for (;;) {
      try {
        return await loadRun(store, threadId, runId);
      } catch (error) {
        if (Date.now() >= deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  defineRoute(
    app,
    ctx,
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
    async ({ params, query, principal, request, reply }) => {
      await loadThread(store, principal, params.id);
      const run = await loadRunSoon(params.id, params.runId);
      const hub = ctx.runs.hub(params.runId);
      const after = lastEventId(request.headers["last-event-id"]);
      if (hub) {
        await pipeHub(ctx, reply, hub, modesOf(query.streamMode), after);
        return undefined;
      }
      if (ctx.scale && run.status === "running") {
        // Running (or queued) in another process: its events come over LISTEN/NOTIFY.
        const modes = modesOf(query.streamMode);
        await pipeRemote(ctx, ctx.scale, reply, run.threadId, run.runId, modes, after);
        return undefined;
      }
      const stream = openTrackedSse(ctx, reply, { "x-rein-run-id": run.runId });
      const { options: _options, ...record } = run;
      stream.send("run", { threadId: run.threadId, runId: run.runId, record }, 0);
      stream.close();
      return undefined;
    },
  );
}
