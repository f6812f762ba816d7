/**
 * Worker process of the Postgres outage tests. Holds one transaction open: right after its
 * `BEGIN` it reports `in-transaction` and waits for `go` on stdin, so the test can stop the server
 * under it. With `<config-json>` it runs the approval worker's steps and holds the answer's
 * transaction; with `migrate` instead it holds the migration's, then reports each `setup()`
 * outcome and retries it after `retry` on stdin.
 */
import type pg from "pg";
import {
  approvalWorkerMain,
  closeInput,
  describeFailure,
  hookSaver,
  report,
  waitForLine,
} from "@rein/core/testing/process";
import { PostgresSaver } from "../saver.ts";

const [url, schema, config] = process.argv.slice(2);
if (!url || !schema || !config)
  throw new Error("usage: outage-worker <url> <schema> <config-json>");
const saver = new PostgresSaver({ connectionString: url, schema });

let armed = false;
let heldOnce = false;
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

async function setupOutcome(): Promise<Record<string, unknown>> {
  try {
    await saver.setup();
    return { ok: true };
  } catch (error) {
    return describeFailure(error);
  }
}

if (config === "migrate") {
  armed = true;
  report({ event: "ready", pid: process.pid });
  report({ event: "result", op: "setup", ...(await setupOutcome()) });
  await waitForLine("retry");
  report({ event: "result", op: "setup", ...(await setupOutcome()) });
  closeInput();
  await saver.close();
  report({ event: "closed" });
} else {
  const store = hookSaver(saver, {
    before: {
      answerInterrupts: () => {
        // Only the first answer's transaction is held: the retry after the restart runs through.
        if (heldOnce) return;
        heldOnce = true;
        armed = true;
      },
    },
  });
  await approvalWorkerMain(store, [config]);
}
