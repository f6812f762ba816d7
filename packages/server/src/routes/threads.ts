/**
 * Threads: create, list, get (status and pending interrupts), state, history, delete.
 */
import { createHash, randomUUID } from "node:crypto";
import { InvalidInputError, ThreadBusyError, type ThreadId } from "@rein/core";
import type { FastifyInstance } from "fastify";
import type { Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { applyOnce, claimRequest, claimThreadId } from "../idempotency.ts";
import { defineRoute } from "../route.ts";
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
} from "../schemas.ts";
import { canSee, loadThread, threadView } from "../threads.ts";

/** The thread id a keyed create without an id gets: the same for every retry of that request. */
function keyedThreadId(principal: Principal, key: string | string[]): string {
  const text = `${principal.tenant ?? "-"}:${Array.isArray(key) ? key[0] : key}`;
  return `t-${createHash("sha256").update(text).digest("hex").slice(0, 32)}`;
}

/** Registers the thread routes. */
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
      const threadId = (body.threadId ??
        (key === undefined ? randomUUID() : keyedThreadId(principal, key))) as ThreadId;
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
        if (!(await claimThreadId(store, threadId, claim))) throw taken();
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

  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/threads",
      operationId: "listThreads",
      summary: "Threads of the caller's tenant, newest first.",
      scope: "read",
      query: ThreadListQuery,
      responses: { 200: ThreadPageSchema },
    },
    async ({ query, principal }) => {
      const page = await store.listThreads({
        ...(principal.tenant !== null ? { tenant: principal.tenant } : {}),
        limit: query.limit ?? 50,
        cursor: query.cursor ?? null,
      });
      const items = await Promise.all(page.items.map((t) => threadView(store, t)));
      return { status: 200, body: { items, nextCursor: page.nextCursor } };
    },
  );

  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/threads/:id",
      operationId: "getThread",
      summary: "A thread: its status, head run and checkpoint, and pending interrupts.",
      scope: "read",
      params: ThreadParams,
      responses: { 200: ThreadSchema },
    },
    async ({ params, principal }) => {
      const thread = await loadThread(store, principal, params.id);
      return { status: 200, body: await threadView(store, thread) };
    },
  );

  defineRoute(
    app,
    ctx,
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
    async ({ params, query, principal }) => {
      const thread = await loadThread(store, principal, params.id);
      const graph = await ctx.registry.forThread(store, thread);
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

  defineRoute(
    app,
    ctx,
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
    async ({ params, query, principal }) => {
      const thread = await loadThread(store, principal, params.id);
      const graph = await ctx.registry.forThread(store, thread);
      const items = await graph.getStateHistory(
        { threadId: params.id },
        { limit: query.limit ?? 20, ...(query.before ? { before: query.before } : {}) },
      );
      return { status: 200, body: { items } };
    },
  );

  defineRoute(
    app,
    ctx,
    {
      method: "DELETE",
      url: "/threads/:id",
      operationId: "deleteThread",
      summary:
        "Deletes a thread and everything stored under it. Refused (409) while a run holds it.",
      scope: "admin",
      params: ThreadParams,
      responses: { 204: null },
    },
    async ({ params, principal, request }) => {
      await loadThread(store, principal, params.id);
      const lease = await store.getLease(params.id as ThreadId);
      if (lease) throw new ThreadBusyError(params.id, null);
      await store.deleteThread(params.id as ThreadId);
      ctx.runs.notifyChange(params.id);
      request.log.info({ threadId: params.id }, "thread deleted");
      return { status: 204 };
    },
  );
}
