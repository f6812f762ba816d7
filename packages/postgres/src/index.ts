/**
 * `@rein/postgres`: Rein's checkpointer on PostgreSQL, for production and for many processes on
 * many machines.
 *
 * {@link PostgresSaver} keeps threads, checkpoints (channel values by version, appends as
 * deltas), task results, interrupts, runs, steering, audit, once-results and leases in one
 * Postgres schema, migrated on setup. Step commits are one round trip with compare-and-set on the
 * stream head; answers are all-or-nothing and exactly one of two concurrent answers wins. It
 * passes the checkpointer conformance suite of `@rein/core/testing`, like every other backend.
 *
 * @example
 * ```ts
 * import { PostgresSaver } from "@rein/postgres";
 *
 * const checkpointer = await PostgresSaver.connect({
 *   connectionString: "postgres://localhost/app",
 *   schema: "rein",
 * });
 * const graph = builder.compile({ checkpointer });
 * ```
 *
 * @module
 */
export { PostgresSaver } from "./saver.ts";
export { PostgresWebhooks } from "./webhooks.ts";
export { PostgresApiKeys } from "./api-keys.ts";
export type { PostgresSaverOptions } from "./saver.ts";
export {
  POOLED_URL_PARAM,
  UnnamedStatementClient,
  hostList,
  multiHostClient,
  pooledUrl,
} from "./pooling.ts";
export type { HostList, StatementMode } from "./pooling.ts";
export { MIGRATIONS, SCHEMA_VERSION, migrate, schemaVersion } from "./migrations.ts";
export type { Migration } from "./migrations.ts";
