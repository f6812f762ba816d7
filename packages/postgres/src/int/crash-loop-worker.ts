/** Worker process of the Postgres crash loop: opens the schema in argv and drives its slot's threads. */
import { crashLoopWorkerMain } from "@rein/core/testing/process";
import { PostgresSaver } from "../saver.ts";

const [url, schema, config] = process.argv.slice(2);
if (!url || !schema || !config)
  throw new Error("usage: crash-loop-worker <url> <schema> <config-json>");
await crashLoopWorkerMain(new PostgresSaver({ connectionString: url, schema }), [config]);
