/**
 * The OpenAPI 3.1 document, derived from the route declarations and their zod schemas.
 */
import { z } from "zod";
import { ErrorResponse } from "@rein/wire";
import type { RouteSpec } from "./route-spec.ts";

type JsonSchema = Record<string, unknown>;

const schemaOf = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
  }) as JsonSchema;
  return rest;
};

/** Parameters of an object schema, one per property. */
function parametersOf(schema: z.ZodType | undefined, where: "path" | "query"): JsonSchema[] {
  if (!schema) return [];
  const json = schemaOf(schema, "input");
  const properties = (json["properties"] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json["required"] ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === "path" || required.has(name),
    schema: property,
  }));
}

/** Fastify's `/threads/:id` as OpenAPI's `/threads/{id}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z]+)/g, "{$1}");
}

/** Builds the document for a list of routes. */
export function buildOpenApi(routes: readonly RouteSpec[], version = "0.1.0"): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const responses: Record<string, JsonSchema> = {};
    for (const [status, schema] of Object.entries(route.responses)) {
      responses[status] = {
        description: Number(status) < 300 ? "Success" : "Error",
        ...(route.sse && Number(status) === 200
          ? { content: { "text/event-stream": { schema: { type: "string" } } } }
          : route.contentType && Number(status) === 200 && schema
            ? { content: { [route.contentType]: { schema: schemaOf(schema, "output") } } }
            : schema
              ? { content: { "application/json": { schema: schemaOf(schema, "output") } } }
              : {}),
      };
    }
    responses["default"] = {
      description: "Error: `{ error, message, details }`",
      content: { "application/json": { schema: schemaOf(ErrorResponse, "output") } },
    };
    const headers = Object.entries(route.headers ?? {}).map(([name, description]) => ({
      name,
      in: "header",
      required: false,
      description,
      schema: { type: "string" },
    }));
    const operation: JsonSchema = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      ...(route.scope || route.checksScope
        ? {
            security: [{ bearer: [route.scope ?? route.checksScope] }],
            "x-rein-scope": route.scope ?? route.checksScope,
          }
        : { security: [] }),
      parameters: [
        ...parametersOf(route.params, "path"),
        ...parametersOf(route.query, "query"),
        ...headers,
      ],
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: { "application/json": { schema: schemaOf(route.body, "input") } },
            },
          }
        : {}),
      responses,
    };
    (paths[openApiPath(route.url)] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Rein",
      version,
      description:
        "Threads, runs, the interrupt queue, resume and steering of Rein's durable agent runtime. Errors are `{ error, message, details }`.",
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
