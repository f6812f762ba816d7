/**
 * The protocol's run routes: on a thread (create, stream, wait, list, get, join, join its stream,
 * cancel) and stateless (`/runs`, `/runs/stream`, `/runs/wait`: a thread of their own, deleted
 * when the run ends unless `on_completion: "keep"`).
 */
import { randomUUID } from "node:crypto";
import { InvalidInputError, type RunId, type RunResult, type ThreadRecord } from "@rein/core";
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import { Id } from "@rein/wire";
import type { Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { lastEventId } from "../streaming.ts";
import { loadRun, loadThread, loadThreadHead, type ThreadHead } from "../thread-access.ts";
import { streamModesOf, type LgStreamOptions } from "./events.ts";
import { NotServedError, lgRoute, parseWith } from "./http.ts";
import { valuesWithInterrupts } from "./mapping/interrupts.ts";
import { messagesOut } from "./mapping/messages.ts";
import { reinRunStatuses } from "./mapping/status.ts";
import { LgRunCreate, startLgRun, type LgRunRequest, type StartedRun } from "./run-start.ts";
import { pipeLgRun, runLocation } from "./sse.ts";
import { graphOfThread, lgRunOf } from "./views.ts";
import { runIdOf, threadIdOf } from "../ids.ts";

const ThreadPath = z.object({ thread_id: Id }).strict();
const RunPath = z.object({ thread_id: Id, run_id: Id }).strict();

const ListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(1000).optional(),
    offset: z.coerce.number().int().min(0).optional(),
    status: z.enum(["pending", "running", "error", "success", "timeout", "interrupted"]).optional(),
    select: z.unknown().optional(),
  })
  .strict();

const JoinQuery = z
  .object({
    stream_mode: z.union([z.string(), z.array(z.string())]).optional(),
    cancel_on_disconnect: z.string().optional(),
    namespace: z.unknown().optional(),
  })
  .loose();

const CancelQuery = z
  .object({
    wait: z.string().optional(),
    action: z.enum(["interrupt", "rollback"]).optional(),
    reason: z.string().max(256).optional(),
  })
  .strict();

/** The thread's values after a run, with `__interrupt__` when it paused (what `runs/wait` answers). */
async function finalValuesOf(ctx: ServerContext, thread: ThreadRecord): Promise<RunResult | null> {
  const served = await graphOfThread(ctx, thread);
  if (!served) return null;
  const state = await served.graph.getState({ threadId: thread.threadId });
  return {
    threadId: thread.threadId,
    runId: runIdOf(state.runId ?? ""),
    status: state.interrupts.length > 0 ? "interrupted" : "done",
    values: state.values,
    interrupts: state.interrupts,
    pendingCount: state.interrupts.length,
    checkpointId: state.checkpointId,
  };
}

/** The body of a wait: final values (with `__interrupt__`), or `__error__` for a failed run. */
function waitBody(result: RunResult): Record<string, unknown> {
  if (result.status === "error")
    return {
      __error__: {
        error: result.error?.name ?? "Error",
        message: result.error?.message ?? "The run failed.",
      },
    };
  return valuesWithInterrupts(messagesOut(result.values), result.interrupts);
}

/** The outcome of a run of this process, or of a queued run once it has one. */
async function outcomeOf(ctx: ServerContext, started: StartedRun): Promise<RunResult> {
  if (started.active) return started.active.result;
  const requestId = (await ctx.store.getRun(started.runId))?.options?.queued?.requestId ?? "";
  return ctx.background.outcome(started.runId, requestId);
}

/** Streams a started run. */
async function streamStarted(
  ctx: ServerContext,
  reply: FastifyReply,
  thread: ThreadRecord,
  started: StartedRun,
  body: LgRunRequest,
): Promise<void> {
  const options: LgStreamOptions = {
    modes: streamModesOf(body.stream_mode),
    subgraphs: body.stream_subgraphs === true,
  };
  await pipeLgRun(ctx, reply, thread.threadId, started.runId, options, 0, () =>
    finalValuesOf(ctx, thread),
  );
}

/** A thread for a stateless run, in the caller's tenant. */
async function statelessThread(ctx: ServerContext, principal: Principal): Promise<ThreadRecord> {
  const now = new Date().toISOString();
  const thread: ThreadRecord = {
    threadId: threadIdOf(randomUUID()),
    tenant: principal.tenant,
    metadata: { stateless: true },
    createdAt: now,
    updatedAt: now,
  };
  await ctx.store.putThread(thread);
  return thread;
}

/** Deletes a stateless run's thread once the run has ended, unless asked to keep it. */
function dropWhenDone(
  ctx: ServerContext,
  thread: ThreadRecord,
  started: Promise<unknown>,
  body: LgRunRequest,
): void {
  if (body.on_completion === "keep") return;
  void started
    .catch(() => undefined)
    .then(() => ctx.store.deleteThread(thread.threadId))
    .catch(() => undefined);
}

/** Registers the run routes on the protocol's app. */
export function registerLgRunRoutes(app: FastifyInstance, ctx: ServerContext): void {
  registerThreadRuns(app, ctx);
  registerRunReads(app, ctx);
  registerStatelessRuns(app, ctx);
}

/** The thread a path names, as the caller may see it. */
async function threadOf(ctx: ServerContext, principal: Principal, params: unknown) {
  const { thread_id } = parseWith(ThreadPath, params, "path");
  return loadThread(ctx.store, principal, threadIdOf(thread_id));
}

/**
 * The thread a run request names, as the caller may see it; for an answer (`command.resume`)
 * with its head in the same read, which the resume needs anyway.
 */
async function threadForRun(
  ctx: ServerContext,
  principal: Principal,
  params: unknown,
  body: LgRunRequest,
): Promise<{ thread: ThreadRecord; head?: ThreadHead }> {
  const { thread_id } = parseWith(ThreadPath, params, "path");
  if (body.command && Object.hasOwn(body.command, "resume")) {
    const head = await loadThreadHead(ctx.store, principal, threadIdOf(thread_id));
    return { thread: head.thread, head };
  }
  return { thread: await loadThread(ctx.store, principal, threadIdOf(thread_id)) };
}

/** The thread and run a path names, as the caller may see them. */
async function runOf(ctx: ServerContext, principal: Principal, params: unknown) {
  const path = parseWith(RunPath, params, "path");
  const thread = await loadThread(ctx.store, principal, threadIdOf(path.thread_id));
  const run = await loadRun(ctx.store, thread.threadId, runIdOf(path.run_id));
  return { thread, run };
}

/** Starting runs on a thread, and listing them. */
function registerThreadRuns(app: FastifyInstance, ctx: ServerContext): void {
  const { store } = ctx;

  lgRoute(
    app,
    ctx,
    "POST",
    "/threads/:thread_id/runs/stream",
    "run",
    async ({ request, reply, principal }) => {
      const body = parseWith(LgRunCreate, request.body, "body");
      const { thread, head } = await threadForRun(ctx, principal, request.params, body);
      const started = await startLgRun(ctx, principal, thread, body, head);
      await streamStarted(ctx, reply, thread, started, body);
      return undefined;
    },
  );

  lgRoute(
    app,
    ctx,
    "POST",
    "/threads/:thread_id/runs",
    "run",
    async ({ request, reply, principal }) => {
      const body = parseWith(LgRunCreate, request.body, "body");
      const { thread, head } = await threadForRun(ctx, principal, request.params, body);
      const started = await startLgRun(ctx, principal, thread, body, head);
      const run = await loadRun(store, thread.threadId, started.runId);
      void reply.headers(runLocation(thread.threadId, started.runId));
      return lgRunOf(run);
    },
  );

  lgRoute(
    app,
    ctx,
    "POST",
    "/threads/:thread_id/runs/wait",
    "run",
    async ({ request, reply, principal }) => {
      const body = parseWith(LgRunCreate, request.body, "body");
      const { thread, head } = await threadForRun(ctx, principal, request.params, body);
      const started = await startLgRun(ctx, principal, thread, body, head);
      void reply.headers(runLocation(thread.threadId, started.runId));
      return waitBody(await outcomeOf(ctx, started));
    },
  );

  lgRoute(app, ctx, "GET", "/threads/:thread_id/runs", "read", async ({ request, principal }) => {
    const thread = await threadOf(ctx, principal, request.params);
    const query = parseWith(ListQuery, request.query, "query");
    const statuses = query.status ? new Set(reinRunStatuses(query.status)) : null;
    const runs = (await store.listRuns(thread.threadId))
      .filter((r) => r.parentRunId === null && (!statuses || statuses.has(r.status)))
      .reverse();
    const offset = query.offset ?? 0;
    return runs.slice(offset, offset + (query.limit ?? 10)).map(lgRunOf);
  });
}

/** Reading, joining and cancelling a run. */
function registerRunReads(app: FastifyInstance, ctx: ServerContext): void {
  lgRoute(
    app,
    ctx,
    "GET",
    "/threads/:thread_id/runs/:run_id",
    "read",
    async ({ request, principal }) => lgRunOf((await runOf(ctx, principal, request.params)).run),
  );

  lgRoute(app, ctx, "DELETE", "/threads/:thread_id/runs/:run_id", "admin", () => {
    throw new NotServedError(
      "Deleting a run",
      "a run's checkpoints are its thread's history; delete the thread with DELETE /threads/{id}.",
    );
  });

  lgRoute(
    app,
    ctx,
    "GET",
    "/threads/:thread_id/runs/:run_id/stream",
    "read",
    async ({ request, reply, principal }) => {
      const { thread, run } = await runOf(ctx, principal, request.params);
      const query = parseWith(JoinQuery, request.query, "query");
      const options: LgStreamOptions = { modes: streamModesOf(query.stream_mode), subgraphs: true };
      await pipeLgRun(
        ctx,
        reply,
        thread.threadId,
        run.runId,
        options,
        lastEventId(request.headers["last-event-id"]),
        () => finalValuesOf(ctx, thread),
      );
      return undefined;
    },
  );

  lgRoute(
    app,
    ctx,
    "GET",
    "/threads/:thread_id/runs/:run_id/join",
    "read",
    async ({ request, principal }) => {
      const { thread, run } = await runOf(ctx, principal, request.params);
      await untilEnded(ctx, run.runId);
      const result = await finalValuesOf(ctx, thread);
      return result ? waitBody(result) : {};
    },
  );

  lgRoute(
    app,
    ctx,
    "POST",
    "/threads/:thread_id/runs/:run_id/cancel",
    "run",
    async ({ request, reply, principal }) => {
      const { run } = await runOf(ctx, principal, request.params);
      const query = parseWith(CancelQuery, request.query, "query");
      if (query.action === "rollback")
        throw new NotServedError(
          "Cancelling with action=rollback",
          "Rein keeps a cancelled run's checkpoints; cancel with action=interrupt.",
        );
      if (run.status === "queued")
        throw new NotServedError(
          "Cancelling a queued run",
          "it starts when the thread is free; cancel it once it runs, or delete the thread.",
        );
      if (run.status === "running") ctx.runs.cancel(run.runId);
      if (query.wait === "1" || query.wait === "true") {
        await untilEnded(ctx, run.runId);
        await reply.code(204).send();
        return undefined;
      }
      await reply.code(202).send();
      return undefined;
    },
  );

  // Stateless runs: a thread of their own.
}

/** Stateless runs: each on a thread of its own. */
function registerStatelessRuns(app: FastifyInstance, ctx: ServerContext): void {
  const { store } = ctx;
  const stateless = async (principal: Principal, raw: unknown) => {
    const body = parseWith(LgRunCreate, raw, "body");
    if (body.command)
      throw new InvalidInputError("A stateless run has nothing to resume; send `input`.");
    const thread = await statelessThread(ctx, principal);
    try {
      return { thread, body, started: await startLgRun(ctx, principal, thread, body) };
    } catch (error) {
      await store.deleteThread(thread.threadId).catch(() => undefined);
      throw error;
    }
  };

  lgRoute(app, ctx, "POST", "/runs/stream", "run", async ({ request, reply, principal }) => {
    const { thread, body, started } = await stateless(principal, request.body);
    dropWhenDone(ctx, thread, outcomeOf(ctx, started), body);
    await streamStarted(ctx, reply, thread, started, body);
    return undefined;
  });

  lgRoute(app, ctx, "POST", "/runs/wait", "run", async ({ request, reply, principal }) => {
    const { thread, body, started } = await stateless(principal, request.body);
    void reply.headers(runLocation(thread.threadId, started.runId));
    const outcome = outcomeOf(ctx, started);
    dropWhenDone(ctx, thread, outcome, body);
    return waitBody(await outcome);
  });

  lgRoute(app, ctx, "POST", "/runs", "run", async ({ request, reply, principal }) => {
    const { thread, body, started } = await stateless(principal, request.body);
    const run = await loadRun(store, thread.threadId, started.runId);
    dropWhenDone(ctx, thread, outcomeOf(ctx, started), body);
    void reply.headers(runLocation(thread.threadId, started.runId));
    return lgRunOf(run);
  });
}

/** Resolves once a run is neither queued nor running (its hub here finished, or its record says so). */
async function untilEnded(ctx: ServerContext, runId: RunId): Promise<void> {
  for (;;) {
    const hub = ctx.runs.hub(runId);
    if (hub && !hub.finished) {
      await new Promise<void>((resolve) => {
        const stop = hub.subscribe(Number.MAX_SAFE_INTEGER, (event) => {
          if (event === null) {
            resolve();
            queueMicrotask(() => stop());
          }
        });
      });
      return;
    }
    const run = await ctx.store.getRun(runId);
    if (!run || (run.status !== "running" && run.status !== "queued")) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
