/**
 * One definition per route: its declaration (method, path, scope, the zod schemas of its input
 * and of each response) and its handler. The definition registers the Fastify handler, which
 * authenticates and validates with the schemas, and feeds the OpenAPI document; the handler's
 * return value is checked at compile time against the response schemas.
 */
import { ANONYMOUS_ACTOR, InvalidInputError, ReinError } from "@rein/core";
import {
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Span,
} from "@opentelemetry/api";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { requireScope, type Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import type { RouteResponses, RouteSpec } from "./spec.ts";

export type { RouteSpec } from "./spec.ts";
import { assertSaneJson } from "../json-guard.ts";

/** What a handler receives: validated input, the caller and the server it runs in. */
export interface RouteInput<P, Q, B> {
  ctx: ServerContext;
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  request: FastifyRequest;
  reply: FastifyReply;
}

/**
 * A body a schema describes, as the handler holds it: `z.input` of the schema (branded ids are
 * strings), read-only all the way down and without the index signature of loose objects, so
 * core's records (interfaces, read-only lists) fit while a missing or mistyped field does not.
 */
export type Sendable<T> = T extends readonly (infer E)[]
  ? readonly Sendable<E>[]
  : T extends object
    ? { readonly [K in keyof T as string extends K ? never : K]: Sendable<T[K]> }
    : T;

/**
 * What a handler returns: one of its route's statuses with a body that status's schema describes
 * ({@link Sendable}), or nothing when it answered itself (SSE). A body the route's responses do
 * not describe does not compile, as tRPC's `.output()`.
 */
export type RouteOutput<R extends RouteResponses = RouteResponses> =
  | {
      [S in keyof R & number]: R[S] extends z.ZodType
        ? { status: S; body: Sendable<z.input<R[S]>> }
        : { status: S; body?: undefined };
    }[keyof R & number]
  | undefined;

/** The caller of routes that need no token. */
const ANONYMOUS: Principal = {
  subject: ANONYMOUS_ACTOR,
  tenant: "",
  scopes: new Set(),
  groups: [],
  roles: [],
};

function parse<T>(schema: z.ZodType<T> | undefined, value: unknown, where: string): T {
  if (!schema) return undefined as T;
  const result = schema.safeParse(value ?? (where === "body" ? undefined : {}));
  if (!result.success)
    throw new InvalidInputError(`The request ${where} is invalid; see details.issues.`, {
      where,
      issues: result.error.issues.slice(0, 20).map((i) => ({
        path: i.path.map(String).join(".").slice(0, 200),
        message: i.message.slice(0, 500),
        code: i.code,
      })),
    });
  return result.data;
}

/**
 * Runs a request's handler inside an OpenTelemetry server span (`HTTP <method> <route>`), so the
 * spans of the runs it starts are its children; a `traceparent` header from the caller is
 * honoured. Without a registered SDK the API hands out no-op spans and this costs next to nothing.
 */
function inRequestSpan<T>(
  spec: RouteSpec<unknown, unknown, unknown, RouteResponses>,
  request: FastifyRequest,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = propagation.extract(context.active(), request.headers);
  return trace.getTracer("@rein/server").startActiveSpan(
    `HTTP ${spec.method} ${spec.url}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        "http.request.method": spec.method,
        "http.route": spec.url,
        "rein.operation": spec.operationId,
        "rein.request_id": request.id,
      },
    },
    parent,
    async (span) => {
      try {
        return await fn(span);
      } catch (error) {
        // Refusals are answers (4xx), not failures of the server: only record their code.
        if (ReinError.is(error)) span.setAttribute("rein.error", error.code);
        else {
          span.recordException(error instanceof Error ? error : String(error));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** A route as defined: its declaration, and how it registers on an app. */
export interface Route {
  readonly spec: RouteSpec;
  /** Registers the route on `app` and records it for the OpenAPI document. */
  mount(app: FastifyInstance, ctx: ServerContext): void;
}

/**
 * Defines one route: its declaration (method, path, scope, input and response schemas) and its
 * handler, whose return value is checked against the responses ({@link RouteOutput}). The
 * handler gets the server's context with its input, so a route is a value of its own, mounted
 * with its group by {@link mountRoutes}.
 */
export function route<P, Q, B, const R extends RouteResponses>(
  spec: RouteSpec<P, Q, B, R>,
  handler: (input: RouteInput<P, Q, B>) => Promise<RouteOutput<NoInfer<R>>>,
): Route {
  return {
    spec,
    mount: (app, ctx) => {
      ctx.routes.push(spec);
      app.route({
        method: spec.method,
        url: spec.url,
        handler: (request, reply) =>
          inRequestSpan(spec, request, async (span) => {
            const principal = spec.scope
              ? await ctx.authenticate(request.headers.authorization)
              : ANONYMOUS;
            if (spec.scope) requireScope(principal, spec.scope);
            const params = parse(spec.params, request.params, "path");
            const query = parse(spec.query, request.query, "query");
            if (spec.body) assertSaneJson(request.body);
            const body = parse(spec.body, request.body, "body");
            const id = (params as { id?: unknown } | undefined)?.id;
            if (typeof id === "string") span.setAttribute("rein.thread_id", id);
            const out = await handler({ ctx, params, query, body, principal, request, reply });
            if (out === undefined) return reply;
            span.setAttribute("http.response.status_code", out.status);
            reply.code(out.status);
            return out.body === undefined ? reply.send() : reply.send(out.body);
          }),
      });
    },
  };
}

/** Registers routes on the app, in order, and records them for the OpenAPI document. */
export function mountRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  routes: readonly Route[],
): void {
  for (const each of routes) each.mount(app, ctx);
}

/** Registers a route on the app and records it for the OpenAPI document: {@link route}, mounted. */
export function defineRoute<P, Q, B, const R extends RouteResponses>(
  app: FastifyInstance,
  ctx: ServerContext,
  spec: RouteSpec<P, Q, B, R>,
  handler: (input: RouteInput<P, Q, B>) => Promise<RouteOutput<NoInfer<R>>>,
): void {
  route(spec, handler).mount(app, ctx);
}
