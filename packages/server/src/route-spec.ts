/**
 * The declaration of a route — method, path, scope and zod schemas — as data: the server context
 * lists them for the OpenAPI document, `route.ts` registers their handlers.
 */
import type { z } from "zod";
import type { Scope } from "./auth.ts";

/** Status → response schema (`null`: no body). */
export type RouteResponses = Record<number, z.ZodType | null>;

/** A route as declared. */
export interface RouteSpec<
  P = unknown,
  Q = unknown,
  B = unknown,
  R extends RouteResponses = RouteResponses,
> {
  method: "GET" | "POST" | "DELETE";
  /** Fastify path, e.g. `/threads/:id`. */
  url: string;
  operationId: string;
  summary: string;
  /** Scope the token needs; `null`: no token needed (or the handler checks it, see below). */
  scope: Scope | null;
  /**
   * With `scope: null`: the scope the handler checks itself (it also takes another credential,
   * as `/metrics` its metrics token), for the OpenAPI document.
   */
  checksScope?: Scope;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /** Extra request headers the route reads (documented in OpenAPI). */
  headers?: Record<string, string>;
  /**
   * Status → response schema (`null`: no body). `text/event-stream` routes set `sse`. The
   * handler's return value is checked against it (see `RouteOutput`).
   */
  responses: R;
  /** The route answers with Server-Sent Events. */
  sse?: boolean;
  /** The media type of a 200 that is not JSON (e.g. `application/jsonl`; its schema is a line's). */
  contentType?: string;
  /** A description of the SSE events, for the OpenAPI document. */
  description?: string;
}
