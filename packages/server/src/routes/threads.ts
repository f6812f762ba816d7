/**
 * Threads: create, list, get (status and pending interrupts), state, history, delete.
 */
import { createHash, randomUUID } from "node:crypto";
import { InvalidInputError, ThreadBusyError } from "@rein/core";
import type { FastifyInstance } from "fastify";
import type { Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { applyOnce, claimRequest, claimThreadId, threadClaimLive } from "../idempotency.ts";
import { defineRoute, mountRoutes, route, type Route } from "./define.ts";
import {
  CreateThreadBody,
  HistoryQuery,
  HistorySchema,
  StateQuery,
  StateSchema,
  ThreadListQuery,
  ThreadPageSchema,
  ThreadParams,
  ThreadSchema,
} from "@rein/wire";
import { canSee, loadThread, threadView } from "../thread-access.ts";
import { threadIdOf } from "../ids.ts";

/** The thread id a keyed create without an id gets: the same for every retry of that request. */
function keyedThreadId(principal: Principal, key: string | string[]): string {
  const text = `${principal.tenant ?? "-"}:${Array.isArray(key) ? key[0] : key}`;
  return `t-${createHash("sha256").update(text).digest("hex").slice(0, 32)}`;
}

/** `GET /threads`. */
const listThreads = route(
  {
    method: "GET",
    url: "/threads",
    operationId: "listThreads",
    summary: "Threads of the caller's tenant, newest first.",
    scope: "read",
    query: ThreadListQuery,
    responses: { 200: ThreadPageSchema },
  },
  async ({ ctx, query, principal }) => {
    const page = await ctx.store.listThreads({
      ...(principal.tenant !== null ? { tenant: principal.tenant } : {}),
      limit: query.limit ?? 50,
      cursor: query.cursor ?? null,
    });
    const items = await Promise.all(page.items.map((t) => threadView(ctx.store, t)));
    return { status: 200, body: { items, nextCursor: page.nextCursor } };
  },
);

/** `GET /threads/:id`. */
const getThread = route(
  {
    method: "GET",
    url: "/threads/:id",
    operationId: "getThread",
    summary: "A thread: its status, head run and checkpoint, and pending interrupts.",
    scope: "read",
    params: ThreadParams,
    responses: { 200: ThreadSchema },
  },
  async ({ ctx, params, principal }) => {
    const thread = await loadThread(ctx.store, principal, params.id);
    return { status: 200, body: await threadView(ctx.store, thread) };
  },
);

/** `GET /threads/:id/state`. */
const getState = route(
  {
    method: "GET",
    url: "/threads/:id/state",
    operationId: "getState",
    summary:
      "The thread's state: values, next tasks, pending interrupts per task (`subgraphs=true` adds child runs).",
    scope: "read",
    params: ThreadParams,
    query: StateQuery,
    responses: { 200: StateSchema },
  },
  async ({ ctx, params, query, principal }) => {
    const thread = await loadThread(ctx.store, principal, params.id);
    const graph = await ctx.registry.forThread(ctx.store, thread);
    const state = await graph.getState(
      {
        threadId: params.id,
        ...(query.checkpointId ? { checkpointId: query.checkpointId } : {}),
      },
      { subgraphs: query.subgraphs === "true" },
    );
    return { status: 200, body: state };
  },
);

/** `GET /threads/:id/history`. */
const getHistory = route(
  {
    method: "GET",
    url: "/threads/:id/history",
    operationId: "getHistory",
    summary: "Checkpoints of the thread, newest first (`before` pages back).",
    scope: "read",
    params: ThreadParams,
    query: HistoryQuery,
    responses: { 200: HistorySchema },
  },
  async ({ ctx, params, query, principal }) => {
    const thread = await loadThread(ctx.store, principal, params.id);
    const graph = await ctx.registry.forThread(ctx.store, thread);
    const items = await graph.getStateHistory(
      { threadId: params.id },
      { limit: query.limit ?? 20, ...(query.before ? { before: query.before } : {}) },
    );
    return { status: 200, body: { items } };
  },
);

/** `DELETE /threads/:id`. */
const deleteThread = route(
  {
    method: "DELETE",
    url: "/threads/:id",
    operationId: "deleteThread",
    summary: "Deletes a thread and everything stored under it. Refused (409) while a run holds it.",
    scope: "admin",
    params: ThreadParams,
    responses: { 204: null },
  },
  async ({ ctx, params, principal, request }) => {
    await loadThread(ctx.store, principal, params.id);
    const lease = await ctx.store.getLease(params.id);
    if (lease) throw new ThreadBusyError(params.id, null);
    await ctx.store.deleteThread(params.id);
    ctx.runs.notifyChange(params.id);
    request.log.info({ threadId: params.id }, "thread deleted");
    return { status: 204 };
  },
);

/** The thread routes but the create, one definition each. */
export const threadRoutes: readonly Route[] = [
  listThreads,
  getThread,
  getState,
  getHistory,
  deleteThread,
];

/** Registers the thread routes: the create, then the rest. */
export function registerThreadRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const { store } = ctx;

  defineRoute(
    app,
    ctx,
    {
      method: "POST",
      url: "/threads",
      operationId: "createThread",
      summary: "Creates a thread of a registered graph, in the caller's tenant.",
      scope: "run",
      body: CreateThreadBody,
      headers: {
        "Idempotency-Key":
          "A repeat with the same body returns the thread it created (without `threadId`, the id derives from the key); another body is 422 `idempotency_key_reused`.",
      },
      responses: { 201: ThreadSchema },
    },
    async ({ body, principal, request }) => {
      ctx.registry.get(body.graph);
      const key = request.headers["idempotency-key"];
      // With a key and no id, the id derives from the key: a retry names the same thread.
      const threadId = threadIdOf(
        body.threadId ?? (key === undefined ? randomUUID() : keyedThreadId(principal, key)),
      );
      const claim = await claimRequest(store, principal, threadId, key, "POST /threads", body);
      const existing = await store.getThread(threadId);
      // A repeat of the request that created it gets the original outcome.
      if (existing && claim && !claim.first && canSee(principal, existing.tenant))
        return { status: 201, body: await threadView(store, existing) };
      // An existing id is refused whatever its tenant, with the same answer, so ids leak nothing.
      const taken = (): InvalidInputError =>
        new InvalidInputError(
          `Thread ${threadId} cannot be created: the id is taken; choose another.`,
          { threadId },
        );
      if (existing) throw taken();
      // A keyed repeat racing the first attempt waits for its outcome instead of creating again.
      await applyOnce(store, threadId, claim, async () => {
        const won = await claimThreadId(store, threadId, claim);
        if (won === null || !(await threadClaimLive(store, threadId, won))) throw taken();
        const now = new Date().toISOString();
        await store.putThread({
          threadId,
          tenant: principal.tenant,
          metadata: body.metadata ?? {},
          graph: body.graph,
          createdAt: now,
          updatedAt: now,
        });
        request.log.info({ threadId, graph: body.graph }, "thread created");
        return true;
      });
      const thread = await loadThread(store, principal, threadId);
      return { status: 201, body: await threadView(store, thread) };
    },
  );

  mountRoutes(app, ctx, threadRoutes);
}
