/**
 * The protocol's thread routes: create, search, count, get, patch, delete; state (get, at a
 * checkpoint, update) and history. A thread created without a graph takes one on its first run.
 */
import { randomUUID } from "node:crypto";
import {
  NotFoundError,
  ThreadBusyError,
  copyThread,
  type StateSnapshot,
  type ThreadRecord,
} from "@rein/core";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { Id } from "@rein/wire";
import type { Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { GraphRegistry } from "../registry.ts";
import { canSee, loadThread } from "../thread-access.ts";
import { NotServedError, ThreadExistsError, lgRoute, parseWith } from "./http.ts";
import { graphOfAssistant } from "./mapping/assistants.ts";
import { checkpointRef, threadStateOf, type LgThreadState } from "./mapping/state.ts";
import {
  graphOfThread,
  lgThreadOf,
  newThreadView,
  threadMetadata,
  type LgThread,
} from "./views.ts";
import { threadIdOf } from "../ids.ts";

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
  return loadThread(ctx.store, principal, threadIdOf(thread_id));
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

/** Sort keys a thread record has itself (no state read needed to sort by them). */
const RECORD_KEYS = {
  created_at: (t: ThreadRecord) => t.createdAt,
  updated_at: (t: ThreadRecord) => t.updatedAt,
  thread_id: (t: ThreadRecord) => t.threadId as string,
} as const;

/**
 * The caller's threads matching a search body, sorted, and the page of them from `offset`
 * (`limit`; all of them when absent), with how many match. Filters on what a record holds
 * (ids, metadata) and sorts by its own fields before anything else is read, so a page of 10
 * among 10,000 threads reads the state of 10; only a `status` or `values` filter, or sorting by
 * `state_updated_at`, reads every candidate's state.
 */
async function searchThreads(
  ctx: ServerContext,
  principal: Principal,
  body: z.infer<typeof SearchBody>,
  page: { offset: number; limit?: number },
): Promise<{ threads: LgThread[]; total: number }> {
  const records: ThreadRecord[] = [];
  let cursor: string | null = null;
  do {
    const next = await ctx.store.listThreads({
      ...(principal.tenant !== null ? { tenant: principal.tenant } : {}),
      limit: 500,
      cursor,
    });
    records.push(...next.items);
    cursor = next.nextCursor;
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
  const key = body.sort_by ?? "created_at";
  const sign = (body.sort_order ?? "desc") === "desc" ? -1 : 1;
  const end = (from: number, total: number) =>
    page.limit === undefined ? total : Math.min(total, from + page.limit);
  if (!body.status && !body.values && Object.hasOwn(RECORD_KEYS, key)) {
    const field = RECORD_KEYS[key as keyof typeof RECORD_KEYS];
    candidates.sort((a, b) => sign * field(a).localeCompare(field(b)));
    const slice = candidates.slice(page.offset, end(page.offset, candidates.length));
    return {
      threads: await Promise.all(slice.map((t) => lgThreadOf(ctx, t))),
      total: candidates.length,
    };
  }
  let threads = await Promise.all(candidates.map((t) => lgThreadOf(ctx, t)));
  if (body.status) threads = threads.filter((t) => t.status === body.status);
  if (body.values) {
    const values = body.values;
    threads = threads.filter((t) => matches(t.values, values));
  }
  threads.sort((a, b) => sign * String(a[key]).localeCompare(String(b[key])));
  return {
    threads: threads.slice(page.offset, end(page.offset, threads.length)),
    total: threads.length,
  };
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
    const threadId = threadIdOf(body.thread_id ?? randomUUID());
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
    // A thread just created without a graph has nothing to read: no state, run or lease.
    return graph === undefined ? newThreadView(record) : lgThreadOf(ctx, record);
  });

  lgRoute(app, ctx, "POST", "/threads/search", "read", async ({ request, principal }) => {
    const body = parseWith(SearchBody, request.body, "body");
    const offset = body.offset ?? 0;
    return (await searchThreads(ctx, principal, body, { offset, limit: body.limit ?? 10 })).threads;
  });

  lgRoute(app, ctx, "POST", "/threads/count", "read", async ({ request, principal }) => {
    const body = parseWith(SearchBody, request.body, "body");
    // A count reads no state unless a status or values filter needs it.
    return (await searchThreads(ctx, principal, body, { offset: 0, limit: 0 })).total;
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

  // A copy starts at the source's head, with the same values and next tasks, its own run, and no
  // history; a thread waiting on answers (409 thread_interrupted) or being run (409 thread_busy)
  // is refused and nothing is written.
  lgRoute(app, ctx, "POST", "/threads/:thread_id/copy", "run", async ({ request, principal }) => {
    const source = await threadOf(ctx, principal, request.params);
    const graph = (await GraphRegistry.graphNameOf(ctx.store, source)) ?? undefined;
    const now = new Date().toISOString();
    const target: ThreadRecord = {
      threadId: threadIdOf(randomUUID()),
      tenant: source.tenant,
      metadata: source.metadata,
      ...(graph !== undefined ? { graph } : {}),
      createdAt: now,
      updatedAt: now,
    };
    const copy = await copyThread(ctx.store, source.threadId, target);
    if (copy.checkpointId === null) await ctx.store.putThread(target);
    request.log.info(
      { threadId: target.threadId, from: source.threadId },
      "thread copied (LangGraph protocol)",
    );
    return lgThreadOf(ctx, target);
  });
}
