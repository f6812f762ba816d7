/** Worker process of the SQLite crash loop: opens the file in argv and drives its slot's threads. */
import { crashLoopWorkerMain } from "@rein/core/testing/process";
import { SqliteSaver } from "../saver.ts";

const [path, config] = process.argv.slice(2);
if (!path || !config) throw new Error("usage: crash-loop-worker <db-path> <config-json>");
await crashLoopWorkerMain(new SqliteSaver({ path }), [config]);
