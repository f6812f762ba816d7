/**
 * Worker process of the Postgres outage test. Runs the approval worker's steps on the cluster in
 * argv, and holds the answer's transaction open: right after its `BEGIN` it reports
 * `in-transaction` and waits for `go` on stdin, so the test can stop the server under it.
 */
import type pg from "pg";
import { approvalWorkerMain, hookSaver, report, waitForLine } from "@rein/core/testing/process";
import { PostgresSaver } from "../saver.ts";

const [url, schema, config] = process.argv.slice(2);
if (!url || !schema || !config)
  throw new Error("usage: outage-worker <url> <schema> <config-json>");
const saver = new PostgresSaver({ connectionString: url, schema });

let armed = false;
type Connect = (callback?: (...args: unknown[]) => void) => Promise<pg.PoolClient> | undefined;
const connect = (saver.pool.connect as Connect).bind(saver.pool);
// The first connection taken for an answer holds its transaction open until the test says go.
// (`pool.query` takes its connections through the callback form: those pass through untouched.)
(saver.pool as unknown as { connect: Connect }).connect = (callback) => {
  if (callback || !armed) return connect(callback);
  armed = false;
  return (connect() as Promise<pg.PoolClient>).then((client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = async (
      ...args
    ) => {
      const result = await query(...args);
      if (typeof args[0] === "string" && /^\s*BEGIN/i.test(args[0])) {
        report({ event: "in-transaction" });
        await waitForLine("go");
      }
      return result;
    };
    return client;
  });
};

const store = hookSaver(saver, {
  before: {
    answerInterrupts: () => {
      armed = true;
    },
  },
});
await approvalWorkerMain(store, [config]);
