/**
 * Signed decision links: `GET /links/<token>` shows a confirmation page and changes nothing (mail
 * scanners and prefetchers follow links); the page's form `POST`s to the same URL, which applies
 * the decision as the principal the link was issued to, through the question's approval policy,
 * once. `POST /interrupts/:id/links` mints a principal's links (admin).
 */
import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply } from "fastify";
import {
  ErrorCodes,
  NotFoundError,
  type BulkRefusedError,
  ReinError,
  decideInterrupts,
  type BulkDecided,
} from "@rein/core";
import { approvalStep, refusalText, type StoredInterrupt } from "@rein/core/store";
import { z } from "zod";
import type { Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { LinksNotConfiguredError, statusByCode } from "../errors.ts";
import { parseDuration, type LinkSettings } from "../notify/config.ts";
import { mintDecisionLinks, questionDigest } from "../notify/links.ts";
import { confirmForm, escapeHtml, facts, page } from "../notify/pages.ts";
import { approvalState, graphLabel, questionSummary } from "../notify/question.ts";
import { decisionValue, verifyLink, type LinkClaims } from "../notify/tokens.ts";
import { defineRoute } from "./define.ts";
import { DecisionLinksSchema, InterruptIdSchema } from "@rein/wire";
import { canSee } from "../thread-access.ts";
import { continueThreads } from "../continue-threads.ts";
import { readSlot, SIDE_KINDS, writeSlot, type ThreadSlot } from "../side-records.ts";
import { interruptIdOf } from "../ids.ts";

/**
 * Where a link's use is recorded: a side record of its thread under the link's tenant, keyed by
 * its nonce. First write wins on every store (across processes on Postgres); it leaves with the
 * thread, and expires with the link (an expired link is refused before its use is looked up).
 */
function usedSlot(claims: LinkClaims): ThreadSlot {
  return {
    tenant: claims.tenant,
    kind: SIDE_KINDS.links,
    threadId: claims.threadId,
    key: claims.nonce,
  };
}

const Name = z.string().min(1).max(256);

/** `POST /interrupts/:id/links`. */
const MintLinksBody = z
  .object({
    principal: z
      .object({
        subject: Name,
        groups: z.array(Name).max(100).optional(),
        roles: z.array(Name).max(100).optional(),
      })
      .strict(),
    /** Lifetime: `90s`, `15m`, `12h`, `3d` or seconds; default the server's (`links.ttl`). */
    ttl: z
      .union([z.string().max(32), z.number()])
      .refine((v) => {
        const ms = parseDuration(v);
        return ms !== null && ms <= 30 * 86_400_000;
      }, "a duration up to 30d: 90s, 15m, 12h, 3d or seconds")
      .optional(),
  })
  .strict();

const InterruptParams = z.object({ id: InterruptIdSchema }).strict();

/** A page to answer with. */
interface Page {
  status: number;
  title: string;
  html: string;
}

/** Registers the link routes; without link settings, minting answers `links_not_configured`. */
export function registerLinkRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  settings: LinkSettings | null,
): void {
  defineRoute(
    app,
    ctx,
    {
      method: "POST",
      url: "/interrupts/:id/links",
      operationId: "mintDecisionLinks",
      summary:
        "Mints a principal's signed decision links for a pending question: one per decision it offers (approve, reject; none for a plain question). Each is single-use, expires, and applies as that principal through the approval policy.",
      scope: "admin",
      params: InterruptParams,
      body: MintLinksBody,
      responses: { 200: DecisionLinksSchema },
    },
    async ({ params, body, principal }) => {
      if (!settings) throw new LinksNotConfiguredError();
      const interrupt = await ctx.store.getInterrupt(params.id);
      if (!interrupt || !canSee(principal, interrupt.tenant) || interrupt.status !== "pending")
        throw new NotFoundError("pending interrupt", params.id);
      const ttlMs = body.ttl === undefined ? settings.ttlMs : (parseDuration(body.ttl) ?? 0);
      const links = mintDecisionLinks(
        settings,
        interrupt,
        {
          subject: body.principal.subject,
          groups: body.principal.groups ?? [],
          roles: body.principal.roles ?? [],
        },
        ttlMs,
      );
      return {
        status: 200,
        body: {
          links: links.map(({ decision, url, expiresAt }) => ({ decision, url, expiresAt })),
        },
      };
    },
  );
  if (!settings) return;

  // The pages live in their own scope: the confirmation form posts urlencoded (an empty body),
  // which the JSON API does not accept anywhere else.
  void app.register((scope, _options, registered) => {
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: 1024 },
      (_request, _body, done) => done(null, {}),
    );
    const tokenOf = (params: unknown): string => (params as { token: string }).token;
    scope.get("/links/:token", async (request, reply) => {
      const token = tokenOf(request.params);
      const found = await inspect(ctx, settings, token);
      if ("status" in found) return send(reply, settings, found);
      const { claims, interrupt } = found;
      const verb = claims.decision === "approve" ? "Approve" : "Reject";
      return send(reply, settings, {
        status: 200,
        title: `${verb} this request?`,
        html:
          describe(claims, interrupt) +
          confirmForm(claims.decision, `${settings.publicUrl}/links/${token}`),
      });
    });
    scope.post("/links/:token", async (request, reply) => {
      const token = tokenOf(request.params);
      return send(reply, settings, await apply(ctx, settings, token));
    });
    registered();
  });
}

/** Answers a page, never cached, never framed, never leaking the token through `Referer`. */
function send(reply: FastifyReply, settings: LinkSettings, out: Page): FastifyReply {
  return reply
    .code(out.status)
    .header("content-type", "text/html; charset=utf-8")
    .header("cache-control", "no-store")
    .header("referrer-policy", "no-referrer")
    .header("x-frame-options", "DENY")
    .header(
      "content-security-policy",
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' " +
        settings.publicUrl +
        "; frame-ancestors 'none'",
    )
    .send(page(out.title, out.html, `${settings.publicUrl}/`));
}

/** The question, the decision and who decides, as the confirmation and outcome pages show them. */
function describe(claims: LinkClaims, interrupt: StoredInterrupt): string {
  const state = approvalState(interrupt.policy, interrupt.approvals);
  return facts([
    ["Question", questionSummary(interrupt.payload, 400)],
    ["Graph", graphLabel(interrupt)],
    ["Thread", interrupt.threadId],
    ["Decision", claims.decision],
    ["As", claims.principal.subject],
    ...(state ? ([["Approvals", state]] as [string, string][]) : []),
  ]);
}

function refused(status: number, title: string, why: string): Page {
  return { status, title, html: `<p>${escapeHtml(why)}</p>` };
}

/**
 * Everything a link must satisfy before its decision may apply, without changing anything:
 * signed by this server, not used, not expired, the question still pending with the digest it
 * had, and the policy letting the principal answer.
 */
async function inspect(
  ctx: ServerContext,
  settings: LinkSettings,
  token: string,
): Promise<Page | { claims: LinkClaims; interrupt: StoredInterrupt }> {
  const verified = verifyLink(settings, token);
  if (!verified.ok)
    return verified.reason === "expired"
      ? refused(
          410,
          "This link has expired",
          "Decision links work for a limited time. Answer in the console instead.",
        )
      : refused(
          400,
          "This link is not valid",
          "It was altered or was not issued by this server. Answer in the console instead.",
        );
  const { claims } = verified;
  if (await readSlot(ctx.store, usedSlot(claims)))
    return refused(
      409,
      "This link was already used",
      "A decision link works once; its decision was submitted already. See the question in the console.",
    );
  const interrupt = await ctx.store.getInterrupt(interruptIdOf(claims.interruptId));
  if (!interrupt || interrupt.threadId !== claims.threadId || interrupt.tenant !== claims.tenant)
    return refused(
      410,
      "This question no longer exists",
      "Its thread was deleted. Nothing was applied.",
    );
  if (interrupt.status !== "pending")
    return refused(
      409,
      "This question was already settled",
      `It is ${interrupt.status === "superseded" ? "replaced by a newer question" : interrupt.status}${interrupt.answeredBy ? ` (by ${interrupt.answeredBy})` : ""}, so this link no longer applies. Nothing was applied.`,
    );
  if (questionDigest(interrupt) !== claims.digest)
    return refused(
      409,
      "The question changed",
      "It is not the question this link was sent for. Nothing was applied; look at the new question in the console.",
    );
  if (interrupt.policy) {
    const step = approvalStep(
      interrupt.policy,
      interrupt.approvals,
      claims.principal,
      decisionValue(claims.decision),
      new Date().toISOString(),
    );
    if (step.kind === "refuse")
      return refused(403, "You may not decide this", refusalText(step.rule, interrupt.policy));
  }
  return { claims, interrupt };
}

/** The `POST`: checks the link, spends it (first spend wins), applies its decision. */
async function apply(ctx: ServerContext, settings: LinkSettings, token: string): Promise<Page> {
  const found = await inspect(ctx, settings, token);
  if ("status" in found) return found;
  const { claims } = found;
  const mine = randomUUID();
  const spent = await writeSlot(
    ctx.store,
    usedSlot(claims),
    { by: mine, at: new Date().toISOString() },
    new Date(claims.exp).toISOString(),
  );
  if ((spent.value as { by?: unknown } | null)?.by !== mine)
    return refused(
      409,
      "This link was already used",
      "A decision link works once; its decision was submitted already. See the question in the console.",
    );
  const principal: Principal = {
    subject: claims.principal.subject,
    tenant: claims.tenant,
    scopes: new Set(["resume"]),
    groups: claims.principal.groups,
    roles: claims.principal.roles,
  };
  let decided: BulkDecided[];
  try {
    decided = await decideInterrupts(ctx.store, {
      ids: [claims.interruptId],
      value: decisionValue(claims.decision),
      actor: principal.subject,
      principal: claims.principal,
      ...(claims.tenant !== null ? { tenant: claims.tenant } : {}),
      ...(ctx.registry.all()[0] ? { lease: ctx.registry.all()[0]?.leaseSettings } : {}),
    });
  } catch (error) {
    if (!ReinError.is(error)) throw error;
    if (error.code !== ErrorCodes.BULK_REFUSED)
      // The thread stayed busy, the store is unavailable: nothing was applied, and the link is
      // spent (its use was recorded first, so no two clicks can both apply).
      return refused(
        statusByCode[error.code] ?? 500,
        "Your decision could not be applied",
        `${error.message} Nothing was applied and this link is now spent: answer in the console.`,
      );
    const refusal = (error as BulkRefusedError).details.refused[0];
    if (refusal?.code === "not_allowed")
      return refused(403, "You may not decide this", refusal.message);
    if (refusal?.code === "invalid_answer")
      // The graph's answer schema refuses the decision convention's answer.
      return refused(
        422,
        "This question does not take this decision",
        `${refusal.message} Nothing was applied: answer in the console.`,
      );
    return refused(
      409,
      "The question changed",
      `${refusal?.message ?? "It changed while your decision was applied."} Nothing was applied.`,
    );
  }
  await continueThreads(ctx, principal, decided);
  const after = await ctx.store.getInterrupt(interruptIdOf(claims.interruptId));
  const recorded = decided[0]?.status === "approval_recorded";
  const state = after ? approvalState(after.policy, after.approvals) : null;
  const done = claims.decision === "approve" ? "Approved" : "Rejected";
  return {
    status: 200,
    title: recorded ? "Your approval is recorded" : done,
    html: recorded
      ? `<p>${escapeHtml(`It needs more approvals before it applies (${state ?? ""}).`)}</p>`
      : `<p>${escapeHtml(`${done} as ${principal.subject}. The run continues.`)}</p>`,
  };
}
