/**
 * Worker process of the fault scenarios on Postgres: opens the schema given in argv and runs the
 * steps of `@rein/core/testing/process`'s approval worker.
 */
import { approvalWorkerMain } from "@rein/core/testing/process";
import { PostgresSaver } from "../saver.ts";

const [url, schema, config] = process.argv.slice(2);
if (!url || !schema || !config) throw new Error("usage: fault-worker <url> <schema> <config-json>");
const saver = new PostgresSaver({ connectionString: url, schema });
await approvalWorkerMain(saver, [config]);
