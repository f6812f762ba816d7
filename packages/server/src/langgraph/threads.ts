/**
 * The protocol's thread routes: create, search, count, get, patch, delete; state (get, at a
 * checkpoint, update) and history. A thread created without a graph takes one on its first run.
 */
import { randomUUID } from "node:crypto";
import {
  NotFoundError,
  ThreadBusyError,
  type StateSnapshot,
  type ThreadId,
  type ThreadRecord,
} from "@rein/core";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { Id } from "@rein/wire";
import type { Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { canSee, loadThread } from "../thread-access.ts";
import { NotServedError, ThreadExistsError, lgRoute, parseWith } from "./http.ts";
import { graphOfAssistant } from "./mapping/assistants.ts";
import { checkpointRef, threadStateOf, type LgThreadState } from "./mapping/state.ts";
import { graphOfThread, lgThreadOf, threadMetadata, type LgThread } from "./views.ts";

const Metadata = z.record(z.string(), z.unknown());

const ThreadPath = z.object({ thread_id: Id }).strict();

const CreateBody = z
  .object({
    thread_id: Id.optional(),
    metadata: Metadata.nullable().optional(),
    if_exists: z.enum(["raise", "do_nothing"]).optional(),
    supersteps: z.array(z.unknown()).nullable().optional(),
    ttl: z.unknown().optional(),
  })
  .loose();

const SearchBody = z
  .object({
    metadata: Metadata.nullable().optional(),
    ids: z.array(Id).max(1000).nullable().optional(),
    values: Metadata.nullable().optional(),
    status: z.enum(["idle", "busy", "interrupted", "error"]).nullable().optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    offset: z.number().int().min(0).optional(),
    sort_by: z
      .enum(["thread_id", "status", "created_at", "updated_at", "state_updated_at"])
      .nullable()
      .optional(),
    sort_order: z.enum(["asc", "desc"]).nullable().optional(),
  })
  .loose();

const PatchBody = z
  .object({ metadata: Metadata.nullable().optional(), ttl: z.unknown().optional() })
  .loose();

const CheckpointBody = z
  .object({
    checkpoint: z.object({ checkpoint_id: Id.nullable().optional() }).loose().nullable().optional(),
    subgraphs: z.boolean().optional(),
  })
  .loose();

const UpdateStateBody = z
  .object({
    values: z.record(z.string(), z.unknown()).nullable().optional(),
    as_node: z.string().min(1).max(256).optional(),
    checkpoint_id: Id.optional(),
    checkpoint: z.object({ checkpoint_id: Id.nullable().optional() }).loose().nullable().optional(),
  })
  .loose();

const HistoryBody = z
  .object({
    limit: z.number().int().min(1).max(1000).optional(),
    before: z
      .union([Id, z.record(z.string(), z.unknown())])
      .nullable()
      .optional(),
    metadata: Metadata.nullable().optional(),
    checkpoint: z.unknown().optional(),
  })
  .loose();

/** The thread a path names, as the caller may see it. */
async function threadOf(
  ctx: ServerContext,
  principal: Principal,
  params: unknown,
): Promise<ThreadRecord> {
  const { thread_id } = parseWith(ThreadPath, params, "path");
  return loadThread(ctx.store, principal, thread_id as ThreadId);
}

/** The state of a thread without a graph yet: empty, no checkpoint. */
function emptyState(threadId: string): LgThreadState {
  return {
    values: {},
    next: [],
    checkpoint: checkpointRef(threadId, null),
    metadata: {},
    created_at: null,
    parent_checkpoint: null,
    tasks: [],
    interrupts: [],
  };
}

/** Whether `value` holds every key of `filter` with an equal (JSON) value. */
function matches(value: Record<string, unknown>, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([k, v]) => JSON.stringify(value[k]) === JSON.stringify(v));
}

/** The caller's threads matching a search body, mapped, sorted, not yet paged. */
async function searchThreads(
  ctx: ServerContext,
  principal: Principal,
  body: z.infer<typeof SearchBody>,
): Promise<LgThread[]> {
  const records: ThreadRecord[] = [];
  let cursor: string | null = null;
  do {
    const page = await ctx.store.listThreads({
      ...(principal.tenant !== null ? { tenant: principal.tenant } : {}),
      limit: 500,
      cursor,
    });
    records.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null && records.length < 10_000);
  const ids = body.ids ? new Set<string>(body.ids) : null;
  const candidates = [];
  for (const record of records) {
    if (ids && !ids.has(record.threadId)) continue;
    if (body.metadata) {
      const served = await graphOfThread(ctx, record);
      if (!matches(threadMetadata(record, served?.name ?? record.graph ?? null), body.metadata))
        continue;
    }
    candidates.push(record);
  }
  let threads = await Promise.all(candidates.map((t) => lgThreadOf(ctx, t)));
  if (body.status) threads = threads.filter((t) => t.status === body.status);
  if (body.values) {
    const values = body.values;
    threads = threads.filter((t) => matches(t.values, values));
  }
  const key = body.sort_by ?? "created_at";
  const sign = (body.sort_order ?? "desc") === "desc" ? -1 : 1;
  return threads.sort((a, b) => sign * String(a[key]).localeCompare(String(b[key])));
}

/** A snapshot as the protocol's state. */
const stateOf = (threadId: string, snapshot: StateSnapshot): LgThreadState =>
  threadStateOf(threadId, snapshot);

/** Registers the thread routes on the protocol's app. */
export function registerLgThreadRoutes(app: FastifyInstance, ctx: ServerContext): void {
  registerThreadRecords(app, ctx);
  registerThreadState(app, ctx);
  registerThreadHistory(app, ctx);
}

/** Create, search, count, get, patch, delete. */
function registerThreadRecords(app: FastifyInstance, ctx: ServerContext): void {
  const { store } = ctx;

  lgRoute(app, ctx, "POST", "/threads", "run", async ({ request, reply, principal }) => {
    const body = parseWith(CreateBody, request.body, "body");
    if (body.supersteps && body.supersteps.length > 0)
      throw new NotServedError(
        "Threads created with supersteps",
        "create the thread, then run it.",
      );
    if (body.ttl !== undefined && body.ttl !== null)
      throw new NotServedError("Thread TTLs", "delete threads with DELETE /threads/{id}.");
    const { graph_id: graphId, ...metadata } = body.metadata ?? {};
    const graph = typeof graphId === "string" ? graphOfAssistant(ctx.registry, graphId) : undefined;
    const threadId = (body.thread_id ?? randomUUID()) as ThreadId;
    const existing = await store.getThread(threadId);
    if (existing) {
      // Another tenant's thread is "taken" as well, with the same answer: ids leak nothing.
      if (body.if_exists === "do_nothing" && canSee(principal, existing.tenant))
        return lgThreadOf(ctx, existing);
      throw new ThreadExistsError(threadId);
    }
    const now = new Date().toISOString();
    const record: ThreadRecord = {
      threadId,
      tenant: principal.tenant,
      metadata,
      ...(graph !== undefined ? { graph } : {}),
      createdAt: now,
      updatedAt: now,
    };
    await store.putThread(record);
    request.log.info({ threadId, graph }, "thread created (LangGraph protocol)");
    reply.code(200);
    return lgThreadOf(ctx, record);
  });

  lgRoute(app, ctx, "POST", "/threads/search", "read", async ({ request, principal }) => {
    const body = parseWith(SearchBody, request.body, "body");
    const offset = body.offset ?? 0;
    return (await searchThreads(ctx, principal, body)).slice(offset, offset + (body.limit ?? 10));
  });

  lgRoute(app, ctx, "POST", "/threads/count", "read", async ({ request, principal }) => {
    const body = parseWith(SearchBody, request.body, "body");
    return (await searchThreads(ctx, principal, body)).length;
  });

  lgRoute(app, ctx, "GET", "/threads/:thread_id", "read", async ({ request, principal }) =>
    lgThreadOf(ctx, await threadOf(ctx, principal, request.params)),
  );

  lgRoute(app, ctx, "PATCH", "/threads/:thread_id", "run", async ({ request, principal }) => {
    const thread = await threadOf(ctx, principal, request.params);
    const body = parseWith(PatchBody, request.body, "body");
    if (body.ttl !== undefined && body.ttl !== null)
      throw new NotServedError("Thread TTLs", "delete threads with DELETE /threads/{id}.");
    const { graph_id: _g, assistant_id: _a, ...metadata } = body.metadata ?? {};
    const updated = {
      ...thread,
      metadata: { ...thread.metadata, ...metadata },
      updatedAt: new Date().toISOString(),
    };
    await store.putThread(updated);
    return lgThreadOf(ctx, updated);
  });

  lgRoute(
    app,
    ctx,
    "DELETE",
    "/threads/:thread_id",
    "admin",
    async ({ request, reply, principal }) => {
      const thread = await threadOf(ctx, principal, request.params);
      if (await store.getLease(thread.threadId)) throw new ThreadBusyError(thread.threadId, null);
      await store.deleteThread(thread.threadId);
      ctx.runs.notifyChange(thread.threadId);
      await reply.code(204).send();
      return undefined;
    },
  );
}

/** The state at the head or at a checkpoint, and writing state. */
function registerThreadState(app: FastifyInstance, ctx: ServerContext): void {
  lgRoute(app, ctx, "GET", "/threads/:thread_id/state", "read", async ({ request, principal }) => {
    const thread = await threadOf(ctx, principal, request.params);
    const served = await graphOfThread(ctx, thread);
    if (!served) return emptyState(thread.threadId);
    return stateOf(thread.threadId, await served.graph.getState({ threadId: thread.threadId }));
  });

  const atCheckpoint = async (thread: ThreadRecord, checkpointId: string | null | undefined) => {
    const served = await graphOfThread(ctx, thread);
    if (!served) {
      if (checkpointId) throw new NotFoundError("checkpoint", checkpointId);
      return emptyState(thread.threadId);
    }
    return stateOf(
      thread.threadId,
      await served.graph.getState({
        threadId: thread.threadId,
        ...(checkpointId ? { checkpointId } : {}),
      }),
    );
  };

  lgRoute(
    app,
    ctx,
    "GET",
    "/threads/:thread_id/state/:checkpoint_id",
    "read",
    async ({ request, principal }) => {
      const { checkpoint_id: checkpointId, ...path } = parseWith(
        z.object({ thread_id: Id, checkpoint_id: Id }).strict(),
        request.params,
        "path",
      );
      const thread = await threadOf(ctx, principal, path);
      return atCheckpoint(thread, checkpointId);
    },
  );

  lgRoute(
    app,
    ctx,
    "POST",
    "/threads/:thread_id/state/checkpoint",
    "read",
    async ({ request, principal }) => {
      const thread = await threadOf(ctx, principal, request.params);
      const body = parseWith(CheckpointBody, request.body, "body");
      return atCheckpoint(thread, body.checkpoint?.checkpoint_id);
    },
  );

  lgRoute(app, ctx, "POST", "/threads/:thread_id/state", "run", async ({ request, principal }) => {
    const thread = await threadOf(ctx, principal, request.params);
    const body = parseWith(UpdateStateBody, request.body, "body");
    const served = await graphOfThread(ctx, thread);
    if (!served)
      throw new NotFoundError(`graph of thread ${thread.threadId} (run it once first):`, "(none)");
    const checkpointId = body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? undefined;
    const { checkpointId: written } = await served.graph.updateState(
      {
        threadId: thread.threadId,
        actor: principal.subject,
        ...(checkpointId ? { checkpointId } : {}),
      },
      body.values ?? {},
      body.as_node !== undefined ? { asNode: body.as_node } : {},
    );
    // LangGraph's server answers `{ checkpoint }`; the SDK's type reads `configurable`: both.
    const ref = checkpointRef(thread.threadId, written);
    return { checkpoint: ref, configurable: ref };
  });
}

/** History, and the copy Rein does not serve. */
function registerThreadHistory(app: FastifyInstance, ctx: ServerContext): void {
  lgRoute(
    app,
    ctx,
    "POST",
    "/threads/:thread_id/history",
    "read",
    async ({ request, principal }) => {
      const thread = await threadOf(ctx, principal, request.params);
      const body = parseWith(HistoryBody, request.body, "body");
      const served = await graphOfThread(ctx, thread);
      if (!served) return [];
      const before = body.before;
      const beforeId =
        typeof before === "string"
          ? before
          : before
            ? ((before["checkpoint_id"] ??
                (before["configurable"] as Record<string, unknown> | undefined)?.[
                  "checkpoint_id"
                ]) as string | undefined)
            : undefined;
      const items = await served.graph.getStateHistory(
        { threadId: thread.threadId },
        { limit: body.limit ?? 10, ...(typeof beforeId === "string" ? { before: beforeId } : {}) },
      );
      let states = items.map((s) => stateOf(thread.threadId, s));
      if (body.metadata) {
        const filter = body.metadata;
        states = states.filter((s) => matches(s.metadata, filter));
      }
      return states;
    },
  );

  lgRoute(app, ctx, "POST", "/threads/:thread_id/copy", "run", () => {
    throw new NotServedError(
      "Copying a thread",
      "Rein keeps one history per thread; fork within the thread with POST /threads/{id}/state at a checkpoint.",
    );
  });
}
