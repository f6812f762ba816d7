/**
 * Worker process of the crash-safety tests: opens the Postgres schema given in argv and runs one
 * step of the shared crash scenario (`@rein/core/testing/runtime`).
 */
import { crashWorkerMain } from "@rein/core/testing/runtime";
import { PostgresSaver } from "../saver.ts";

const [url, schema, ...rest] = process.argv.slice(2);
if (!url || !schema) {
  throw new Error("usage: crash-worker <url> <schema> <mode> <threadId> <marksFile> [answer]");
}
const saver = await PostgresSaver.connect({ connectionString: url, schema });
await crashWorkerMain(saver, rest);
await saver.close();
