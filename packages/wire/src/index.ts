/**
 * `@rein/wire` — the shapes of Rein's HTTP API, declared once as zod schemas, and the types
 * inferred from them. `@rein/server` validates requests with the schemas, checks its handlers'
 * bodies against them and derives its OpenAPI document from them; `@rein/client` and the console
 * import the types only.
 *
 * @packageDocumentation
 */
export * from "./schemas.ts";
export * from "./webhooks.ts";
export * from "./api-keys.ts";
export type * from "./types.ts";
