/**
 * Worker process of the Postgres outage tests. Holds one write in flight: with `<config-json>` it
 * runs the approval worker's steps and holds the answer's write statement (after its read) on a
 * checked-out connection; with `migrate` instead it holds the migration's transaction right after
 * its `BEGIN`. Either way it reports `in-transaction` and waits for `go` on stdin, so the test can
 * stop the server under it, then reports each outcome and retries after `retry` on stdin.
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
type Query = (...args: unknown[]) => unknown;

/** Holds `client`'s next answer write until the test says go. */
function holdAnswerWrite(client: pg.PoolClient): void {
  const target = client as unknown as { query: Query };
  const query = target.query.bind(client);
  target.query = (...args: unknown[]) => {
    const name = (args[0] as { name?: string } | undefined)?.name ?? "";
    if (!armed || !name.endsWith("answer_write")) return query(...args);
    armed = false;
    target.query = query;
    report({ event: "in-transaction" });
    void waitForLine("go").then(() => query(...args));
    return undefined;
  };
}

// The first answer write is held until the test says go; the first migration holds its
// transaction after BEGIN.
(saver.pool as unknown as { connect: Connect }).connect = (callback) => {
  if (!armed) return connect(callback);
  if (callback) {
    // `pool.query` takes its connections through the callback form.
    return connect((error, client, ...rest) => {
      if (!error && client && armed) holdAnswerWrite(client as pg.PoolClient);
      callback(error, client, ...rest);
    });
  }
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
        // Only the first answer's write is held: the retry after the restart runs through.
        if (heldOnce) return;
        heldOnce = true;
        armed = true;
      },
    },
  });
  await approvalWorkerMain(store, [config]);
}
