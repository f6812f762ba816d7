/**
 * A thread id's claim survives a crash at any point, with real processes on SQLite and Postgres:
 * a `rein serve` is SIGKILLed at random moments while clients create unkeyed threads with ids of
 * their own choosing (`POST /threads` with `threadId`), then started again. Once a claim the crash
 * left would be stale, every id tried is either free (a create now succeeds) or a working thread
 * (GET 200, and a run on it finishes) — never burned.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { PostgresSaver } from "@rein/postgres";
import { testSchemaName } from "@rein/postgres/testing";
import { THREAD_CLAIM_STALE_MS } from "./idempotency.ts";
import { launchRein, TEST_GRAPHS, type Proc } from "./testing/processes.ts";
import { TOKENS, client, postgresBackend } from "./testing/harness.ts";

const token = TOKENS["alice"]!.token;
/** Kill rounds per store. */
const ROUNDS = 4;
/** Clients creating threads at once. */
const CLIENTS = 6;

const postgres = await postgresBackend();

/** Where a store's `rein serve` keeps its data. */
interface StoreArgs {
  name: string;
  available: boolean;
  args: (dir: string) => string[];
  cleanup?: () => Promise<void>;
}

const schema = testSchemaName();
const stores: StoreArgs[] = [
  { name: "sqlite", available: true, args: (dir) => ["--db", join(dir, "rein.db")] },
  {
    name: "postgres",
    available: postgres.available,
    args: () => ["--postgres", postgres.url, "--schema", schema],
    cleanup: async () => {
      const store = new PostgresSaver({ connectionString: postgres.url, schema });
      await store.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
      await store.close();
    },
  },
];

for (const store of stores) {
  describe.skipIf(!store.available)(`thread id claims across SIGKILLs (${store.name})`, () => {
    const dir = mkdtempSync(join(tmpdir(), "rein-claims-kill-"));
    let server: Proc | undefined;
    afterAll(async () => {
      server?.child.kill("SIGKILL");
      await store.cleanup?.();
      rmSync(dir, { recursive: true, force: true });
    });

    const start = (): Promise<Proc> => {
      writeFileSync(join(dir, "tokens.json"), JSON.stringify(Object.values(TOKENS)));
      return launchRein(
        [
          "serve",
          ...store.args(dir),
          ...["--graphs", TEST_GRAPHS, "--concurrency", "4"],
          ...["--tokens", join(dir, "tokens.json"), "--port", "0", "--log-level", "silent"],
        ],
        /listening on (\S+)/,
      );
    };

    it(
      "every id is free or a working thread after kills at random points",
      { timeout: 300_000 },
      async () => {
        const began = Date.now();
        const ids: string[] = [];
        let [kills, answered] = [0, 0];
        for (let round = 0; round < ROUNDS; round++) {
          server = await start();
          const api = client(server.url!, token);
          // Clients creating ids one after another; the kill lands at a random moment once the
          // server has created at least one (so it falls among creates in progress).
          let [running, firstCreated] = [true, (): void => undefined];
          const created = new Promise<void>((done) => (firstCreated = done));
          const create = async (worker: number): Promise<void> => {
            for (let i = 0; running; i++) {
              const threadId = `kill-${round}-${worker}-${i}`;
              ids.push(threadId);
              const status = await api("POST", "/threads", { graph: "ledger", threadId }).then(
                (r) => r.status,
                () => 0,
              );
              if (status === 201) {
                answered += 1;
                firstCreated();
              }
              if (status === 0) return;
            }
          };
          const clients = Array.from({ length: CLIENTS }, (_, w) => create(w));
          await Promise.race([created, sleep(20_000)]);
          await sleep(Math.random() * 60);
          server.child.kill("SIGKILL");
          kills += 1;
          running = false;
          await Promise.all(clients);
          const child = server.child;
          if (child.exitCode === null && child.signalCode === null)
            await new Promise((done) => child.once("exit", done));
        }
        const lastKill = Date.now();
        server = await start();
        const api = client(server.url!, token);
        // A claim the last kill left is taken over once it is stale.
        await sleep(Math.max(0, lastKill + THREAD_CLAIM_STALE_MS + 500 - Date.now()));
        let [free, working] = [0, 0];
        const problems: string[] = [];
        const check = async (threadId: string): Promise<void> => {
          const found = await api("GET", `/threads/${threadId}`);
          if (found.status === 404) {
            const created = await api("POST", "/threads", { graph: "ledger", threadId });
            if (created.status !== 201) problems.push(`${threadId}: create ${created.status}`);
            else free += 1;
          } else if (found.status === 200) working += 1;
          else problems.push(`${threadId}: GET ${found.status}`);
          const run = await api<{ status: string }>("POST", `/threads/${threadId}/runs`, {
            input: { tag: threadId },
            wait: true,
          });
          if (run.status !== 200 || run.body.status !== "done")
            problems.push(`${threadId}: run ${run.status} ${JSON.stringify(run.body)}`);
        };
        for (let i = 0; i < ids.length; i += 8) await Promise.all(ids.slice(i, i + 8).map(check));
        console.info(
          `thread claims (${store.name}): rounds ${ROUNDS}, kills ${kills}, ids checked ${ids.length}, ` +
            `created before a kill ${answered}, free after ${free}, working threads ${working}, ` +
            `burned ${problems.length}, ${((Date.now() - began) / 1000).toFixed(1)} s`,
        );
        expect(problems).toEqual([]);
        expect(free + working).toBe(ids.length);
        expect(kills).toBe(ROUNDS);
      },
    );
  });
}
