/**
 * `@rein/sqlite`: the embedded default checkpointer for Rein, on one SQLite file.
 *
 * {@link SqliteSaver} stores threads, checkpoints (channel values by version, appends as deltas),
 * task results, interrupts, runs, steering, audit, once-results and leases in a WAL-mode SQLite
 * database through Node's built-in `node:sqlite` (nothing to compile). It passes the checkpointer
 * conformance suite of `@rein/core/testing`, like every other backend. Several processes on one
 * machine may share a file; for many machines use `@rein/postgres`.
 *
 * @example
 * ```ts
 * import { SqliteSaver } from "@rein/sqlite";
 *
 * const checkpointer = SqliteSaver.open("rein.db");
 * const graph = builder.compile({ checkpointer });
 * ```
 *
 * @module
 */
export { SqliteSaver } from "./saver.ts";
export { SqliteWebhooks } from "./webhooks.ts";
export { SqliteApiKeys } from "./api-keys.ts";
export type { SqliteSaverOptions } from "./saver.ts";
export { MIGRATIONS, SCHEMA_VERSION, migrate, schemaVersion } from "./migrations.ts";
export type { Migration } from "./migrations.ts";
