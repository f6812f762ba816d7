/**
 * `POST /interrupts/decisions`: one decision for many pending interrupts (by id, or a queue
 * filter with the count the caller saw), all or nothing. Core checks each as if answered alone
 * and writes all the answers in one transaction of the store; the affected threads' runs then
 * continue in the background.
 */
import type { FastifyInstance } from "fastify";
import { CountMismatchError, decideInterrupts } from "@rein/core";
import { answerPrincipal, type Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { applyOnce, claimRequest } from "../idempotency.ts";
import { continueThreads } from "../continue-threads.ts";
import { mountRoutes, route, type Route } from "./define.ts";
import { BulkDecidedSchema, BulkDecisionBody } from "@rein/wire";

/**
 * The key space of bulk decisions' `Idempotency-Key`s: they name no one thread, so their claims
 * are kept under this reserved name.
 */
const BULK_KEYS = "rein-bulk-decisions";

/** The largest filter a bulk decision takes (its ids are read page by page). */
const MAX_FILTERED = 10_000;

/** `POST /interrupts/decisions`. */
const decide = route(
  {
    method: "POST",
    url: "/interrupts/decisions",
    operationId: "decideInterrupts",
    summary:
      "Applies one decision to a list of pending interrupts (`ids`), or to those a queue filter matches (`filter` with `expectedCount`), all or nothing: each is checked as if answered alone (pending, the caller's tenant, allowed by its approval policy). A refusal is 409 `bulk_refused` listing why for each; a filter whose count changed is 409 `count_mismatch`.",
    scope: "resume",
    body: BulkDecisionBody,
    headers: {
      "Idempotency-Key": "A repeat with the same body returns the first outcome, applied once.",
    },
    responses: { 200: BulkDecidedSchema },
  },
  async ({ ctx, body, principal, request }) => {
    const claim = await claimRequest(
      ctx.store,
      principal,
      BULK_KEYS,
      request.headers["idempotency-key"],
      "POST /interrupts/decisions",
      request.body,
    );
    const outcome = await applyOnce(ctx.store, BULK_KEYS, claim, async () => {
      const ids = body.ids ?? (await filtered(ctx, principal, body));
      const decided = await decideInterrupts(ctx.store, {
        ids,
        value: body.resume ?? null,
        actor: principal.subject,
        principal: answerPrincipal(principal),
        ...(principal.tenant !== null ? { tenant: principal.tenant } : {}),
        ...(body.steering !== undefined ? { steering: body.steering } : {}),
        ...(ctx.registry.all()[0] ? { lease: ctx.registry.all()[0]?.leaseSettings } : {}),
      });
      await continueThreads(ctx, principal, decided);
      return { decided, count: decided.length };
    });
    request.log.info({ count: outcome.count }, "bulk decision");
    return { status: 200, body: outcome };
  },
);

/** The decision routes, one definition each. */
export const decisionRoutes: readonly Route[] = [decide];

/** Registers the decision routes. */
export function registerDecisionRoutes(app: FastifyInstance, ctx: ServerContext): void {
  mountRoutes(app, ctx, decisionRoutes);
}

/**
 * The ids of the pending interrupts a filter matches, in the caller's tenant.
 *
 * @throws CountMismatchError when they are not `expectedCount`.
 */
async function filtered(
  ctx: ServerContext,
  principal: Principal,
  body: { filter?: Record<string, string | undefined> | undefined; expectedCount?: number },
): Promise<string[]> {
  const graph = ctx.registry.all()[0];
  const filter = body.filter ?? {};
  const ids: string[] = [];
  let cursor: string | null = null;
  let total = 0;
  do {
    if (!graph) break;
    const page = await graph.listInterrupts({
      status: "pending",
      ...(principal.tenant !== null ? { tenant: principal.tenant } : {}),
      ...(filter["graph"] !== undefined ? { graph: filter["graph"] } : {}),
      ...(filter["subAgentGraph"] !== undefined ? { subAgentGraph: filter["subAgentGraph"] } : {}),
      ...(filter["threadId"] !== undefined ? { threadId: filter["threadId"] } : {}),
      cursor,
      limit: 1000,
      count: cursor === null,
    });
    if (cursor === null) total = page.total ?? page.items.length;
    ids.push(...page.items.map((item) => item.id));
    cursor = page.nextCursor;
  } while (cursor !== null && ids.length < MAX_FILTERED);
  if (total !== body.expectedCount) throw new CountMismatchError(body.expectedCount ?? 0, total);
  return ids;
}
