/**
 * Worker process of the crash-safety tests: opens the SQLite file given in argv and runs one step
 * of the shared crash scenario (`@rein/core/testing/runtime`).
 */
import { crashWorkerMain } from "@rein/core/testing/runtime";
import { SqliteSaver } from "../saver.ts";

const [path, ...rest] = process.argv.slice(2);
if (!path) throw new Error("usage: crash-worker <db-path> <mode> <threadId> <marksFile> [answer]");
await crashWorkerMain(new SqliteSaver({ path }), rest);
