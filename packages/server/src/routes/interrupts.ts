/**
 * The approval queue and what people do with it: list (and a live feed), resume, steer, audit.
 */
import type { FastifyInstance } from "fastify";
import { NotFoundError, type InterruptListQuery, type ThreadId } from "@rein/core";
import type { Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { applyOnce, claimRequest } from "../idempotency.ts";
import { launch, resumeWork } from "../launch.ts";
import { mountRoutes, route, type Route } from "./define.ts";
import {
  AuditPageSchema,
  AuditQuerySchema,
  InterruptPageSchema,
  InterruptQuerySchema,
  InterruptStreamQuery,
  ResumeBody,
  RunAcceptedSchema,
  RunResultSchema,
  SteerBody,
  SteeringSchema,
  ThreadParams,
} from "@rein/wire";
import { openTrackedSse } from "../streaming.ts";
import { latestMetadata, loadRun, loadThread, loadThreadHead } from "../thread-access.ts";
import { z } from "zod";

/** The resume body plus `wait` (default true: answer with the continued run's result). */
const ResumeRequestBody = ResumeBody.extend({ wait: z.boolean().optional() }).strict();

/** A page of the approval queue as the caller may see it, with the count of all its pages. */
async function queuePage(
  ctx: ServerContext,
  principal: Principal,
  query: {
    status?: InterruptListQuery["status"];
    graph?: string;
    subAgentGraph?: string;
    threadId?: ThreadId;
    cursor?: string;
    limit?: number;
  },
) {
  if (query.threadId !== undefined) {
    const thread = await ctx.store.getThread(query.threadId);
    if (!thread || (principal.tenant !== null && thread.tenant !== principal.tenant))
      return { items: [], nextCursor: null, total: 0 };
  }
  const graph = ctx.registry.all()[0];
  if (!graph) return { items: [], nextCursor: null, total: 0 };
  const page = await graph.listInterrupts({
    status: query.status ?? "pending",
    ...(principal.tenant !== null ? { tenant: principal.tenant } : {}),
    ...(query.graph !== undefined ? { graph: query.graph } : {}),
    ...(query.subAgentGraph !== undefined ? { subAgentGraph: query.subAgentGraph } : {}),
    ...(query.threadId !== undefined ? { threadId: query.threadId } : {}),
    cursor: query.cursor ?? null,
    limit: query.limit ?? 50,
    count: true,
  });
  return { ...page, total: page.total ?? page.items.length };
}

/** The query of a live feed's page. */
type FeedQuery = { graph?: string; subAgentGraph?: string; threadId?: ThreadId; limit?: number };

/**
 * The live feed's pages of one server, shared by its clients: one query per (tenant, filters)
 * per change notice or half poll interval, however many consoles watch the same page.
 */
class QueueFeed {
  private version = 0;
  private readonly shared = new Map<
    string,
    { version: number; at: number; page: ReturnType<typeof queuePage> }
  >();

  constructor(private readonly ctx: ServerContext) {
    ctx.runs.onChange(() => (this.version += 1));
  }

  page(principal: Principal, query: FeedQuery): ReturnType<typeof queuePage> {
    const { ctx, shared, version } = this;
    const key = JSON.stringify([
      principal.tenant,
      query.graph,
      query.subAgentGraph,
      query.threadId,
      query.limit,
    ]);
    const hit = shared.get(key);
    if (hit && hit.version === version && Date.now() - hit.at < ctx.queuePollMs / 2)
      return hit.page;
    const page = queuePage(ctx, principal, query);
    shared.set(key, { version, at: Date.now(), page });
    page.catch(() => shared.delete(key));
    if (shared.size > 1000) shared.delete(shared.keys().next().value as string);
    return page;
  }
}

const feeds = new WeakMap<ServerContext, QueueFeed>();

/** The live feed of a server, made when its routes are registered. */
function feedOf(ctx: ServerContext): QueueFeed {
  let feed = feeds.get(ctx);
  if (!feed) {
    feed = new QueueFeed(ctx);
    feeds.set(ctx, feed);
  }
  return feed;
}

/** `GET /interrupts`. */
const listInterrupts = route(
  {
    method: "GET",
    url: "/interrupts",
    operationId: "listInterrupts",
    summary:
      "The approval queue across threads of the caller's tenant, newest first: run-tree path, node, task id, sub-agent id, checkpoint id, created time, deadline, payload.",
    scope: "read",
    query: InterruptQuerySchema,
    responses: { 200: InterruptPageSchema },
  },
  async ({ ctx, query, principal }) => ({
    status: 200,
    body: await queuePage(ctx, principal, query),
  }),
);

/** `GET /interrupts/stream`. */
const streamInterrupts = route(
  {
    method: "GET",
    url: "/interrupts/stream",
    operationId: "streamInterrupts",
    summary: "Live feed of the approval queue (SSE) for consoles.",
    description:
      "Sends `interrupts` (a first page of pending interrupts, the body of `GET /interrupts` with the same filters) at once and again whenever that page changes: at once for changes this process makes, within the poll interval (2 s by default) for changes made by other processes. Comment lines (`: ping`) keep the connection alive.",
    scope: "read",
    query: InterruptStreamQuery,
    responses: { 200: null },
    sse: true,
  },
  async ({ ctx, query, principal, reply }) => {
    let last = "";
    let stopListening: () => void = () => undefined;
    let refreshing = false;
    let again = false;
    let stopTimer: () => void = () => undefined;
    const stream = openTrackedSse(ctx, reply, {}, () => {
      stopTimer();
      stopListening();
    });
    const refresh = async (): Promise<void> => {
      if (refreshing) {
        again = true;
        return;
      }
      refreshing = true;
      try {
        do {
          again = false;
          const page = await feedOf(ctx).page(principal, query);
          const fingerprint =
            // A partial approval changes no status but is news to the queue ("1 of 2").
            page.items
              .map((i) => `${i.id}:${i.status}:${i.approval?.approvals.length ?? ""}`)
              .join(",") + `|${page.nextCursor ?? ""}|${page.total}`;
          if (fingerprint !== last) {
            last = fingerprint;
            stream.send("interrupts", page);
          }
        } while (again && !stream.closed);
      } catch (error) {
        stream.send("error", { error: "store_unavailable", message: String(error), details: {} });
      } finally {
        refreshing = false;
      }
    };
    stopListening = ctx.runs.onChange(() => void refresh());
    const timer = setInterval(() => void refresh(), ctx.queuePollMs);
    timer.unref();
    stopTimer = () => clearInterval(timer);
    await refresh();
    await stream.done;
    return undefined;
  },
);

/** `POST /threads/:id/resume`. */
const resume = route(
  {
    method: "POST",
    url: "/threads/:id/resume",
    operationId: "resume",
    summary:
      "Answers pending interrupts (`resume` for the one in scope, or `resumeMap` by id), optionally narrowed by `target`, with steering, a pendingChildren policy and an expected head; then continues the run. A stale target is 409 with the latest metadata; an answer its schema rejects is 422.",
    scope: "resume",
    params: ThreadParams,
    body: ResumeRequestBody,
    headers: {
      "Idempotency-Key": "A repeat with the same key returns the first outcome, applied once.",
    },
    responses: { 200: RunResultSchema, 202: RunAcceptedSchema },
  },
  async ({ ctx, params, body, principal, request }) => {
    // One read for the thread and its head, carried whole to the run: the expected head is
    // checked against it and the head's run names the run's hub. The target and the answer are
    // checked by core under the thread's lease, read with the lease in its round trip.
    const head = await loadThreadHead(ctx.store, principal, params.id);
    const claim = await claimRequest(
      ctx.store,
      principal,
      params.id,
      request.headers["idempotency-key"],
      "POST /threads/:id/resume",
      request.body,
    );
    const requestId = claim?.requestId;
    const work = await resumeWork(ctx, params.id, body, request.body, principal, requestId, head);
    const run = await launch(ctx, principal, head, work);
    ctx.runs.notifyChange(params.id);
    request.log.info({ threadId: params.id, runId: run.hub.runId }, "resume");
    if (body.wait === false) {
      await run.started;
      run.result.catch(() => undefined);
      return {
        status: 202,
        body: { threadId: params.id, runId: run.hub.runId, status: "running" as const },
      };
    }
    return { status: 200, body: await run.result };
  },
);

/** `POST /threads/:id/steer`. */
const steer = route(
  {
    method: "POST",
    url: "/threads/:id/steer",
    operationId: "steer",
    summary:
      "Records a steering instruction for a run, task or interrupt (default: the thread's head run) without resuming; node code of the next execution in that scope reads it.",
    scope: "resume",
    params: ThreadParams,
    body: SteerBody,
    headers: {
      "Idempotency-Key":
        "A repeat with the same body returns the record it made, recorded once; another body is 422 `idempotency_key_reused`.",
    },
    responses: { 201: SteeringSchema },
  },
  async ({ ctx, params, body, principal, request }) => {
    const thread = await loadThread(ctx.store, principal, params.id);
    const claim = await claimRequest(
      ctx.store,
      principal,
      params.id,
      request.headers["idempotency-key"],
      "POST /threads/:id/steer",
      request.body,
    );
    const graph = await ctx.registry.forThread(ctx.store, thread);
    const record = await applyOnce(ctx.store, params.id, claim, async () => {
      let target = body.target;
      if (target) await loadRun(ctx.store, params.id, target.runId);
      else {
        const latest = await latestMetadata(ctx.store, params.id);
        if (!latest.runId) throw new NotFoundError("run of thread", params.id);
        target = { runId: latest.runId, namespace: [] };
      }
      return graph.steer(target, body.text, { actor: principal.subject });
    });
    request.log.info({ threadId: params.id, runId: record.runId }, "steer");
    return { status: 201, body: record };
  },
);

/** `GET /audit`. */
const listAudit = route(
  {
    method: "GET",
    url: "/audit",
    operationId: "listAudit",
    summary:
      "The audit log (answers, cancellations, timeouts, steering, state edits) of the caller's tenant, oldest first.",
    scope: "read",
    query: AuditQuerySchema,
    responses: { 200: AuditPageSchema },
  },
  async ({ ctx, query, principal }) => {
    if (query.threadId !== undefined) await loadThread(ctx.store, principal, query.threadId);
    const page = await ctx.store.listAudit({
      ...(query.threadId !== undefined ? { threadId: query.threadId } : {}),
      ...(principal.tenant !== null ? { tenant: principal.tenant } : {}),
      cursor: query.cursor ?? null,
      limit: query.limit ?? 50,
    });
    return { status: 200, body: page };
  },
);

/** The interrupt routes, one definition each. */
export const interruptRoutes: readonly Route[] = [
  listInterrupts,
  streamInterrupts,
  resume,
  steer,
  listAudit,
];

/** Registers the interrupt routes. */
export function registerInterruptRoutes(app: FastifyInstance, ctx: ServerContext): void {
  // The feed counts change notices from now on, as the routes can be called.
  feedOf(ctx);
  mountRoutes(app, ctx, interruptRoutes);
}
