/**
 * The fan-out over LISTEN/NOTIFY against a real Postgres: events published in one tick travel
 * packed into few notifications, and still reach the other process complete, in order, with an
 * event too large for a notification replaced by a stub.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { probePostgres, testSchemaName } from "@rein/postgres/testing";
import { PgFanout, type FanoutMessage } from "./fanout.ts";

const probe = await probePostgres();

describe.skipIf(!probe.available)("run events across processes (LISTEN/NOTIFY)", () => {
  const schema = testSchemaName();
  let pool: pg.Pool;
  let sender: PgFanout;
  let receiver: PgFanout;
  let notifications = 0;
  let counter: pg.Client;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: probe.url });
    sender = new PgFanout(pool, probe.url, schema);
    receiver = new PgFanout(pool, probe.url, schema);
    await sender.start();
    await receiver.start();
    // A plain listener on the same channel counts the notifications themselves.
    counter = new pg.Client({ connectionString: probe.url });
    await counter.connect();
    counter.on("notification", () => (notifications += 1));
    await counter.query(`LISTEN "${`rein_${schema}`.slice(0, 63)}"`);
  });

  afterAll(async () => {
    await sender.stop();
    await receiver.stop();
    await counter.end();
    await pool.end();
  });

  it("delivers every event of a tick in order, in fewer notifications than events", async () => {
    const runId = "run-fanout";
    const received: (FanoutMessage & { kind: "event" })[] = [];
    const changes: string[] = [];
    const unsubscribe = receiver.subscribeRun(runId, (m) => received.push(m));
    receiver.onChange((threadId) => changes.push(threadId));
    const events = 300;
    for (let id = 1; id <= events; id++)
      sender.publish({
        kind: "event",
        runId,
        threadId: "t-1",
        event: { id, event: "updates", data: { text: `event ${id} `.repeat(5) } },
        done: id === events,
      });
    // One event too large for any notification.
    sender.publish({
      kind: "event",
      runId,
      threadId: "t-1",
      event: { id: events + 1, event: "values", data: { blob: "x".repeat(20_000) } },
      done: true,
    });
    sender.publish({ kind: "change", threadId: "t-1" });
    // The counting listener is a connection of its own: under load it hears the notifications
    // after the receiver did, so the wait covers it too, and then lets stragglers arrive.
    await vi.waitFor(
      () => {
        if (received.length < events + 1 || changes.length < 1 || notifications < 2)
          throw new Error(
            `heard ${received.length} events, ${changes.length} changes, ${notifications} notifications`,
          );
      },
      { timeout: 10_000, interval: 20 },
    );
    await new Promise((done) => setTimeout(done, 200));
    unsubscribe();
    expect(received.map((m) => m.event.id)).toEqual(
      Array.from({ length: events + 1 }, (_, i) => i + 1),
    );
    expect(received[0]?.event.data).toEqual({ text: "event 1 ".repeat(5) });
    expect(received.at(-1)?.event.data).toEqual({ truncated: true, type: "values" });
    expect(changes).toEqual(["t-1"]);
    // Packed: 300 events of ~90 bytes fit in a handful of 7.5 KB notifications, not 302.
    expect(notifications).toBeGreaterThan(1);
    expect(notifications).toBeLessThan(20);
  });

  it("a process does not hear its own messages", async () => {
    const heard: string[] = [];
    const stop = sender.onChange((threadId) => heard.push(threadId));
    const other: string[] = [];
    const stopOther = receiver.onChange((threadId) => other.push(threadId));
    sender.publish({ kind: "change", threadId: "t-own" });
    await vi.waitFor(
      () => {
        if (other.length === 0) throw new Error("the other process heard nothing");
      },
      { timeout: 10_000, interval: 20 },
    );
    stop();
    stopOther();
    expect(other).toEqual(["t-own"]);
    expect(heard).toEqual([]);
  });
});
