/**
 * The protocol layer's HTTP edge: who calls (`x-api-key` or `Authorization: Bearer`, both Rein
 * tokens with their tenant and scopes), request bodies checked by one zod schema each, and errors
 * as JSON the SDK surfaces (`detail` as LangGraph's server writes it, beside Rein's `error`,
 * `message` and `details`): 4xx for bad input and refusals, 501 for a feature not served.
 */
import { InvalidInputError, NotFoundError, ReinError } from "@rein/core";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { requireScope, type Principal, type Scope } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { PayloadTooLargeError, reinErrorResponse, retryableCodes } from "../errors.ts";
import { assertSaneJson } from "../json-guard.ts";
import { latestMetadata } from "../thread-access.ts";
import { threadIdOf } from "../ids.ts";

/** Codes of the errors only this layer raises. */
export const LgErrorCodes = {
  /** A route of the SDK this server does not serve (store, crons, assistant writes...). */
  NOT_IMPLEMENTED: "not_implemented",
  /** A thread id asked for at creation is taken. */
  THREAD_EXISTS: "thread_exists",
} as const;

/** A code of {@link LgErrorCodes}. */
export type LgErrorCode = (typeof LgErrorCodes)[keyof typeof LgErrorCodes];

/**
 * A route or option of LangGraph's protocol that Rein does not serve: answered 501 with the
 * feature named, so a client sees what is missing instead of a 404 that looks like a typo.
 */
export class NotServedError extends Error {
  readonly code = LgErrorCodes.NOT_IMPLEMENTED;
  constructor(
    readonly feature: string,
    readonly why: string,
  ) {
    super(`${feature} is not served by Rein's LangGraph protocol layer: ${why}`);
    this.name = "NotServedError";
  }
}

/** A thread created with an id that is taken (`if_exists: "raise"`, LangGraph's default). */
export class ThreadExistsError extends Error {
  readonly code = LgErrorCodes.THREAD_EXISTS;
  constructor(readonly threadId: string) {
    super(
      `Thread ${threadId} already exists; choose another id, or send if_exists: "do_nothing" to get it.`,
    );
    this.name = "ThreadExistsError";
  }
}

/**
 * The caller of a request: the token of `Authorization: Bearer` or, as LangGraph clients send
 * it, `x-api-key`.
 *
 * @throws UnauthorizedError, ForbiddenError.
 */
export async function principalOf(
  ctx: ServerContext,
  request: FastifyRequest,
  scope: Scope,
): Promise<Principal> {
  const apiKey = request.headers["x-api-key"];
  const header =
    request.headers.authorization ??
    (typeof apiKey === "string" && apiKey !== "" ? `Bearer ${apiKey}` : undefined);
  const principal = await ctx.authenticate(header);
  requireScope(principal, scope);
  return principal;
}

/**
 * A request part checked by its schema.
 *
 * @throws InvalidInputError listing the issues.
 */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  if (where === "body") assertSaneJson(value);
  const result = schema.safeParse(value ?? {});
  if (!result.success)
    throw new InvalidInputError(`The request ${where} is invalid; see details.issues.`, {
      where,
      issues: result.error.issues.slice(0, 20).map((i) => ({
        path: i.path.map(String).join(".").slice(0, 200),
        message: i.message.slice(0, 500),
      })),
    });
  return result.data;
}

/** The error body of this layer: Rein's fields plus LangGraph's `detail`. */
interface LgErrorBody {
  detail: string;
  error: string;
  message: string;
  details: Record<string, unknown>;
}

async function errorReply(
  ctx: ServerContext,
  error: unknown,
): Promise<{ status: number; body: LgErrorBody } | null> {
  if (error instanceof NotServedError)
    return {
      status: 501,
      body: {
        detail: error.message,
        error: error.code,
        message: error.message,
        details: { feature: error.feature },
      },
    };
  if (error instanceof ThreadExistsError)
    return {
      status: 409,
      body: {
        detail: error.message,
        error: error.code,
        message: error.message,
        details: { threadId: error.threadId },
      },
    };
  let rein: ReinError | null = ReinError.is(error) ? error : null;
  const fastify = error as Partial<FastifyError>;
  if (!rein && (fastify.code === "FST_ERR_CTP_BODY_TOO_LARGE" || fastify.statusCode === 413))
    rein = new PayloadTooLargeError(0);
  else if (
    !rein &&
    fastify.statusCode !== undefined &&
    fastify.statusCode >= 400 &&
    fastify.statusCode < 500
  )
    rein = new InvalidInputError(
      `The request is malformed: ${String(fastify.message).slice(0, 300)}`,
      {
        reason: fastify.code ?? "bad_request",
      },
    );
  if (!rein) return null;
  const { status, body } = reinErrorResponse(rein);
  if (
    status === 409 &&
    typeof body.details["threadId"] === "string" &&
    !("latest" in body.details)
  ) {
    // As on the native API, a 409 carries the latest metadata (pending ids among it).
    const latest = await latestMetadata(ctx.store, threadIdOf(body.details["threadId"])).catch(
      () => null,
    );
    if (latest) body.details = { ...body.details, latest };
  }
  return { status, body: { detail: body.message, ...body } };
}

/** Answers this layer's errors in its JSON shape; anything unexpected is a logged 500. */
export function installErrorHandling(app: FastifyInstance, ctx: ServerContext): void {
  app.setErrorHandler(async (error: unknown, request, reply) => {
    const answer = await errorReply(ctx, error);
    if (!answer) {
      request.log.error({ err: error }, "request failed");
      return reply.code(500).send({
        detail: "The server failed to handle this request; it was logged with its request id.",
        error: "internal_error",
        message: "The server failed to handle this request; it was logged with its request id.",
        details: { requestId: request.id },
      });
    }
    if (retryableCodes.has(answer.body.error)) reply.header("retry-after", "1");
    return reply.code(answer.status).send(answer.body);
  });
  app.setNotFoundHandler(async (request, reply) => {
    const rein = new NotFoundError("route", `${request.method} ${request.url.slice(0, 200)}`);
    const { status, body } = reinErrorResponse(rein);
    return reply.code(status).send({ detail: body.message, ...body });
  });
}

/** The CORS headers the app's hook set on a reply, for an SSE response written by hand. */
export function corsHeadersOf(reply: FastifyReply): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders()))
    if ((name.startsWith("access-control-") || name === "vary") && value !== undefined)
      out[name] = String(value);
  return out;
}

/** What a protocol route's handler receives. */
export interface LgInput {
  request: FastifyRequest;
  reply: FastifyReply;
  principal: Principal;
}

/**
 * Registers one protocol route: the caller authenticated with `scope` (none for public routes),
 * then the handler, whose value is the JSON body (`undefined`: it answered itself).
 */
export function lgRoute(
  app: FastifyInstance,
  ctx: ServerContext,
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
  url: string,
  scope: Scope | null,
  handler: (input: LgInput) => unknown,
): void {
  app.route({
    method,
    url,
    handler: async (request, reply) => {
      const principal = scope === null ? null : await principalOf(ctx, request, scope);
      const body = await handler({
        request,
        reply,
        principal: principal ?? {
          subject: "anonymous",
          tenant: "",
          scopes: new Set(),
          groups: [],
          roles: [],
        },
      });
      if (body === undefined) return reply;
      return reply.send(body);
    },
  });
}
