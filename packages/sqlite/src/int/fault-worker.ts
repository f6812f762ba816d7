/**
 * Worker process of the fault scenarios on SQLite: opens the file given in argv and runs the
 * steps of `@rein/core/testing/process`'s approval worker.
 */
import { approvalWorkerMain } from "@rein/core/testing/process";
import { SqliteSaver } from "../saver.ts";

const [path, config] = process.argv.slice(2);
if (!path || !config) throw new Error("usage: fault-worker <db-path> <config-json>");
await approvalWorkerMain(new SqliteSaver({ path }), [config]);
