/**
 * Threads: create, list, get (status and pending interrupts), state, history, delete.
 */
import { randomUUID } from "node:crypto";
import { InvalidInputError, ThreadBusyError, type ThreadId } from "@rein/core";
import type { FastifyInstance } from "fastify";
import type { ServerContext } from "../context.ts";
import { GRAPH_KEY } from "../registry.ts";
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
import { loadThread, threadView } from "../threads.ts";

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
      responses: { 201: ThreadSchema },
    },
    async ({ body, principal, request }) => {
      ctx.registry.get(body.graph);
      const threadId = (body.threadId ?? randomUUID()) as ThreadId;
      if (await store.getThread(threadId))
        // An existing id is refused whatever its tenant, with the same answer, so ids leak nothing.
        throw new InvalidInputError(
          `Thread ${threadId} cannot be created: the id is taken; choose another.`,
          {
            threadId,
          },
        );
      const now = new Date().toISOString();
      await store.putThread({
        threadId,
        tenant: principal.tenant,
        metadata: { ...body.metadata, [GRAPH_KEY]: body.graph },
        createdAt: now,
        updatedAt: now,
      });
      request.log.info({ threadId, graph: body.graph }, "thread created");
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
