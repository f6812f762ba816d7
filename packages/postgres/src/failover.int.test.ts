/**
 * Fencing across a failover: a primary with a synchronous streaming replica (both throwaway
 * clusters, the replica made with `pg_basebackup`), the primary stopped with `-m immediate` and
 * the replica promoted. A lease acknowledged before the failover keeps its token on the new
 * primary, no token is handed out twice, and the holder whose lease was taken writes nothing.
 *
 * The primary's WAL writer is slowed to its 10 s maximum, so WAL nobody waits for stays
 * unflushed until the crash: what the replica has is exactly what commits waited for.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FencedOutError, type TaskId, type ThreadId } from "@rein/core";
import { PostgresSaver } from "./saver.ts";
import { clusterUnavailableReason, freePortIn, ThrowawayCluster } from "./cluster.ts";
import { testSchemaName } from "./testing.ts";

const unavailable = clusterUnavailableReason();
if (unavailable) console.warn(`failover suite skipped: ${unavailable}`);
if (unavailable && process.env["REIN_REQUIRE_POSTGRES"] === "1")
  throw new Error(`failover suite cannot run (${unavailable}) and REIN_REQUIRE_POSTGRES=1.`);

const SYNC = { synchronous_standby_names: "'*'", wal_writer_delay: "10000ms" };

/** Waits until the primary streams to a synchronous standby. */
async function waitForSyncStandby(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let i = 0; i < 200; i++) {
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_replication WHERE sync_state = 'sync'",
      );
      if (rows[0]?.n === 1) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("the replica never became a synchronous standby");
  } finally {
    await client.end();
  }
}

describe.skipIf(unavailable !== null)("fencing across a failover", { timeout: 90_000 }, () => {
  let primary: ThrowawayCluster;
  let replica: ThrowawayCluster;
  const savers: PostgresSaver[] = [];
  const clients: pg.Client[] = [];

  beforeAll(async () => {
    primary = await ThrowawayCluster.create({
      port: await freePortIn(55450, 55454),
      settings: SYNC,
    });
    primary.start();
    replica = await ThrowawayCluster.replicaOf(primary, { port: await freePortIn(55455, 55459) });
    replica.start();
    await waitForSyncStandby(primary.url);
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
    for (const s of savers) await s.close().catch(() => undefined);
    replica?.destroy();
    primary?.destroy();
  });

  it("no fencing token is handed out twice, and a holder whose lease was taken writes nothing after the failover", async () => {
    const schema = testSchemaName();
    const thread = "t-1" as ThreadId;
    const zombie = await PostgresSaver.connect({ connectionString: primary.url, schema });
    savers.push(zombie);
    // Another process takes a token and its transaction is still open at the crash: the
    // sequence's WAL record is its, and no commit waited for it.
    const other = new pg.Client({ connectionString: primary.url });
    clients.push(other);
    other.on("error", () => undefined);
    await other.connect();
    await other.query("BEGIN");
    await other.query(`SELECT nextval('"${schema}".lease_tokens')`);
    // Acknowledged to its holder: this token must never be handed out again.
    const held = await zombie.acquireLease(thread, "zombie", 1_000);
    expect(held).not.toBeNull();

    primary.stop("immediate");
    replica.promote();
    await zombie.close();

    const next = await PostgresSaver.connect({ connectionString: replica.url, schema });
    savers.push(next);
    const tokens: number[] = [];
    for (let i = 0; i < 4; i++)
      tokens.push((await next.acquireLease(`o-${i}` as ThreadId, "new", 60_000))!);
    // The zombie's lease runs out; a new owner takes the thread.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const taken = await next.acquireLease(thread, "new", 60_000);
    expect(taken).not.toBeNull();
    tokens.push(taken!);
    console.info(`token held before the failover ${held}; handed out after: ${tokens.join(", ")}`);
    expect(tokens).not.toContain(held);
    expect(Math.min(...tokens)).toBeGreaterThan(held!);

    // The zombie reconnects (to the new primary) and tries to write with its old token.
    const back = await PostgresSaver.connect({ connectionString: replica.url, schema });
    savers.push(back);
    const fence = { threadId: thread, token: held! };
    await expect(back.putOnce(thread, "task" as TaskId, "charge", 1, fence)).rejects.toBeInstanceOf(
      FencedOutError,
    );
    expect(await back.getOnce(thread, "task" as TaskId, "charge")).toBeUndefined();
    expect(await back.renewLease(thread, "zombie", 60_000)).toBe(false);
  });
});
