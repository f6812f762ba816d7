/**
 * The HTTP shell every route shares: Fastify's options (body limit, poisoning, request ids, raw
 * parser errors in the API's shape) and the `rein-http` plugin — the reply serializer, request
 * ids and CORS, the error handler and the 404 handler. Not encapsulated: they hold for every
 * route, the feature plugins' included.
 */
import { InvalidInputError, NotFoundError, ReinError } from "@rein/core";
import type { FastifyError, FastifyReply, FastifyServerOptions } from "fastify";
import { STATUS_CODES, maxHeaderSize } from "node:http";
import type { Duplex } from "node:stream";
import {
  HeadersTooLargeError,
  PayloadTooLargeError,
  RequestTimeoutError,
  reinErrorResponse,
  retryableCodes,
} from "../errors.ts";
import { threadIdOf } from "../ids.ts";
import { latestMetadata } from "../thread-access.ts";
import { toWireJson } from "../wire.ts";
import { featurePlugin } from "./define.ts";

/**
 * Answers a request Node's HTTP parser refused before Fastify saw it (headers past
 * `maxHeaderSize`, a request timeout, malformed HTTP) in the API's error shape, on the raw
 * socket, then closes the connection as Node does.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const rein =
    error.code === "HPE_HEADER_OVERFLOW"
      ? new HeadersTooLargeError(maxHeaderSize)
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? new RequestTimeoutError()
        : new InvalidInputError("The request is not well-formed HTTP.", {
            reason: error.code ?? "bad_request",
          });
  const { status, body } = reinErrorResponse(rein);
  const text = JSON.stringify(body);
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  socket.destroy(error);
}

function mapFastifyError(error: FastifyError, bodyLimit: number): ReinError | null {
  if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE" || error.statusCode === 413)
    return new PayloadTooLargeError(bodyLimit);
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    return new InvalidInputError(`The request is malformed: ${error.message.slice(0, 300)}`, {
      reason: error.code ?? "bad_request",
    });
  return null;
}

/** Fastify's options for a server with this body limit and logger. */
export function fastifyOptions(
  bodyLimit: number,
  logger: FastifyServerOptions["logger"],
): FastifyServerOptions {
  return {
    bodyLimit,
    logger,
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    routerOptions: { maxParamLength: 2048 },
    requestIdHeader: "x-request-id",
    genReqId: () => crypto.randomUUID(),
    clientErrorHandler: answerClientError,
    // Router errors (a malformed URL, a path parameter past the limit) answer in Rein's shape too.
    frameworkErrors: (error, _request, reply) => {
      const { status, body } = reinErrorResponse(
        mapFastifyError(error, bodyLimit) ??
          new InvalidInputError("The request URL is malformed.", { reason: error.code }),
      );
      void (reply as unknown as FastifyReply).code(status).send(body);
    },
  };
}

/** Options of {@link httpPlugin}. */
export interface HttpPluginOptions {
  bodyLimit: number;
  /** Origins allowed to call from a browser. */
  corsOrigins: readonly string[];
}

/** Serializer, request ids and CORS, error and 404 handlers for the whole app. */
export const httpPlugin = featurePlugin<HttpPluginOptions>(
  { name: "rein-http", dependencies: ["rein-context"], needs: ["rein"], encapsulated: false },
  (app, { bodyLimit, corsOrigins }) => {
    const context = app.rein;
    app.setReplySerializer((payload) => toWireJson(payload));
    const allowed = new Set(corsOrigins);
    app.addHook("onRequest", async (request, reply) => {
      reply.header("x-request-id", request.id);
      const origin = request.headers.origin;
      if (!origin || !allowed.has(origin)) return;
      reply.header("access-control-allow-origin", origin);
      reply.header("vary", "origin");
      // Content-Location and Location name a new run to LangGraph clients (the protocol layer).
      reply.header("access-control-expose-headers", "x-request-id, content-location, location");
      if (request.method === "OPTIONS") {
        reply.header("access-control-allow-methods", "GET, POST, PATCH, PUT, DELETE");
        reply.header(
          "access-control-allow-headers",
          "authorization, x-api-key, content-type, idempotency-key, last-event-id",
        );
        await reply.code(204).send();
      }
    });
    app.setErrorHandler(async (error: FastifyError, request, reply) => {
      const rein = ReinError.is(error) ? error : mapFastifyError(error, bodyLimit);
      if (!rein) {
        request.log.error({ err: error }, "request failed");
        return reply.code(500).send({
          error: "internal_error",
          message: "The server failed to handle this request; it was logged with its request id.",
          details: { requestId: request.id },
        });
      }
      const { status, body } = reinErrorResponse(rein);
      const threadId = body.details["threadId"];
      if (status === 409 && typeof threadId === "string" && !("headCheckpointId" in body.details)) {
        // Every 409 carries the latest metadata so the caller can re-decide without another
        // read. The id is the one the refusing call was made for (core raised it with it).
        const latest = await latestMetadata(context.store, threadIdOf(threadId)).catch(() => null);
        if (latest) body.details = { ...body.details, latest };
      }
      if (retryableCodes.has(body.error)) reply.header("retry-after", "1");
      if (status >= 500) request.log.error({ err: error }, "request failed");
      else request.log.info({ code: body.error, status }, "request refused");
      return reply.code(status).send(body);
    });
    app.setNotFoundHandler(async (request, reply) => {
      const { status, body } = reinErrorResponse(
        new NotFoundError("route", `${request.method} ${request.url.slice(0, 200)}`),
      );
      return reply.code(status).send(body);
    });
  },
);
