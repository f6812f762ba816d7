/**
 * The provable audit log: `GET /audit/verify` re-computes the hash chains of the caller's tenant
 * and names the first broken link; `GET /audit/export` streams the lines with their hashes as
 * JSON Lines, for an auditor to keep and re-check elsewhere (see docs/audit.md).
 */
import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import {
  InvalidInputError,
  type AuditChainQuery,
  type RuntimeStore,
  type ThreadId,
} from "@rein/core";
import type { AuditChainStore, ThreadCatalogStore } from "@rein/core/store";
import type { Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { mountRoutes, route, type Route } from "./define.ts";
import { AuditExportLineSchema, AuditScopeQuerySchema, AuditVerificationSchema } from "@rein/wire";
import { loadThread } from "../thread-access.ts";

/** Lines per store read while exporting. */
const EXPORT_PAGE = 1000;

/**
 * The chains a caller may check: a tenant's token sees its own tenant's only (naming another is
 * refused); an all-tenant token sees every chain, or the tenant it names.
 *
 * @throws {InvalidInputError} for a tenant-bound token naming another tenant.
 */
async function scopeOf(
  store: ThreadCatalogStore,
  principal: Principal,
  query: { threadId?: ThreadId | undefined; tenant?: string | undefined },
): Promise<Pick<AuditChainQuery, "threadId" | "tenant">> {
  if (principal.tenant !== null && query.tenant !== undefined && query.tenant !== principal.tenant)
    throw new InvalidInputError(
      `This token is bound to tenant ${JSON.stringify(principal.tenant)}: it can check only that tenant's audit log. Omit tenant.`,
      { tenant: query.tenant },
    );
  // A thread of another tenant is not found, as everywhere else.
  if (query.threadId !== undefined) await loadThread(store, principal, query.threadId);
  const tenant = principal.tenant ?? query.tenant;
  return {
    ...(query.threadId !== undefined ? { threadId: query.threadId } : {}),
    ...(tenant !== undefined ? { tenant } : {}),
  };
}

/** The export's lines, one JSON text per line, read page by page. */
async function* exportLines(
  store: RuntimeStore & AuditChainStore,
  scope: Pick<AuditChainQuery, "threadId" | "tenant">,
): AsyncGenerator<string> {
  let cursor: string | null = null;
  do {
    const page = await store.listAuditChain({ ...scope, limit: EXPORT_PAGE, cursor });
    for (const line of page.items) {
      let record: unknown = null;
      try {
        record = store.serializer.deserialize(line.content);
      } catch {
        // A line whose content no longer decodes is exported as stored, for the verifier.
      }
      yield `${JSON.stringify(AuditExportLineSchema.parse({ ...line, record }))}\n`;
    }
    cursor = page.nextCursor;
  } while (cursor !== null);
}

/** `GET /audit/verify`. */
const verifyAudit = route(
  {
    method: "GET",
    url: "/audit/verify",
    operationId: "verifyAudit",
    summary:
      "Re-computes the audit log's hash chains (one per thread) of the caller's tenant and names the first broken link; with the server's audit key, also checks each chain's signed head (a deleted tail) and signs the heads it verified.",
    scope: "read",
    query: AuditScopeQuerySchema,
    responses: { 200: AuditVerificationSchema },
  },
  async ({ ctx, query, principal, request }) => {
    const scope = await scopeOf(ctx.store, principal, query);
    const result = await ctx.store.verifyAudit({
      ...scope,
      ...(ctx.auditKey !== null ? { key: ctx.auditKey } : {}),
    });
    if (!result.ok) request.log.warn({ audit: result.firstBroken }, "audit chain broken");
    return { status: 200, body: result };
  },
);

/** `GET /audit/export`. */
const exportAudit = route(
  {
    method: "GET",
    url: "/audit/export",
    operationId: "exportAudit",
    summary:
      "The audit log of the caller's tenant as JSON Lines, by thread then append order: each line with its chain position, previous hash, hash and the stored text they cover.",
    scope: "read",
    query: AuditScopeQuerySchema,
    contentType: "application/jsonl",
    responses: { 200: AuditExportLineSchema },
  },
  async ({ ctx, query, principal, reply }) => {
    const scope = await scopeOf(ctx.store, principal, query);
    // The first page is read before the status is sent: a failing ctx.store is a 5xx, not a
    // 200 with a cut body.
    const lines = exportLines(ctx.store, scope);
    const first = await lines.next();
    async function* all(): AsyncGenerator<string> {
      if (!first.done) yield first.value;
      yield* lines;
    }
    await reply.code(200).type("application/jsonl; charset=utf-8").send(Readable.from(all()));
    return undefined;
  },
);

/** The audit routes, one definition each. */
export const auditRoutes: readonly Route[] = [verifyAudit, exportAudit];

/** Registers the audit routes. */
export function registerAuditRoutes(app: FastifyInstance, ctx: ServerContext): void {
  mountRoutes(app, ctx, auditRoutes);
}
