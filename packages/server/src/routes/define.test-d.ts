/**
 * Compile-time checks of route definitions (`tsc -b` compiles them; an unused
 * `@ts-expect-error` fails the build): a handler may return only a body its route's response
 * schema describes, under a status the route declares; ids in params carry core's brand.
 */
import type { RunId, ThreadId } from "@rein/core";
import { RunAcceptedSchema, RunParams, ThreadSchema } from "@rein/wire";
import type { FastifyInstance } from "fastify";
import type { ServerContext } from "../context.ts";
import { defineRoute } from "./define.ts";

declare const app: FastifyInstance;
declare const ctx: ServerContext;

const spec = {
  method: "GET",
  url: "/threads/:id/runs/:runId",
  operationId: "typeTest",
  summary: "A route of the type tests.",
  scope: "read",
  params: RunParams,
  responses: { 202: RunAcceptedSchema, 204: null },
} as const;

/** A body the schema describes, under a declared status: compiles. */
export function accepted(): void {
  defineRoute(app, ctx, spec, ({ params }) => {
    const threadId: ThreadId = params.id;
    const runId: RunId = params.runId;
    return Promise.resolve({ status: 202, body: { threadId, runId, status: "queued" } });
  });
  defineRoute(app, ctx, spec, () => Promise.resolve({ status: 204 }));
}

/** What the schema does not describe: refused at compile time. */
export function refused(): void {
  // @ts-expect-error a status the route does not declare
  defineRoute(app, ctx, spec, () => Promise.resolve({ status: 200, body: {} }));
  defineRoute(app, ctx, spec, () =>
    // @ts-expect-error a status outside the schema's enum
    Promise.resolve({ status: 202, body: { threadId: "t", runId: "r", status: "done" } }),
  );
  defineRoute(app, ctx, spec, () =>
    // @ts-expect-error a body missing a field of the schema
    Promise.resolve({ status: 202, body: { threadId: "t", status: "queued" } }),
  );
  defineRoute(app, ctx, { ...spec, responses: { 200: ThreadSchema } }, () =>
    // @ts-expect-error another route's body
    Promise.resolve({ status: 200, body: { threadId: "t", runId: "r", status: "queued" } }),
  );
}
