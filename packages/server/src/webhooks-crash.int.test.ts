/**
 * Webhooks across real processes: a server SIGKILLed between the commit of an event and its
 * delivery (the receiver holds the first attempt open, then the server dies) → the event is
 * delivered after a restart (a `rein serve` on SQLite, a `rein worker` on Postgres), under the
 * same id, once; subscriptions made and read with the `rein webhooks` CLI.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { PostgresSaver } from "@rein/postgres";
import { probePostgres, testSchemaName } from "@rein/postgres/testing";
import { TOKENS, client } from "./testing/harness.ts";
import { REIN_BIN, TEST_GRAPHS, launchRein, type Proc } from "./testing/processes.ts";
import { TestReceiver } from "./testing/receiver.ts";

const run = promisify(execFile);

/** Fast delivery; a claim lapses 1.5 s after its process died; no attempt times out here. */
const ENV = {
  REIN_WEBHOOK_POLL_MS: "50",
  REIN_WEBHOOK_LEASE_MS: "1500",
  REIN_WEBHOOK_TIMEOUT_MS: "20000",
  REIN_WEBHOOK_BACKOFF_MS: "100",
};

/** `rein webhooks ... --json` against `url` with the admin token. */
async function cli(url: string, ...args: string[]): Promise<unknown> {
  const { stdout } = await run(process.execPath, [
    REIN_BIN,
    "webhooks",
    ...args,
    ...["--url", url, "--token", TOKENS["admin"]!.token, "--json"],
  ]);
  return JSON.parse(stdout) as unknown;
}

interface Store {
  name: string;
  available: boolean;
  args: string[];
  /** What runs after the kill: `serve` on SQLite, `worker` on Postgres. */
  restart: "serve" | "worker";
  destroy(): Promise<void>;
}

function sqlite(dir: string): Store {
  return {
    name: "sqlite",
    available: true,
    args: ["--db", join(dir, "rein.db")],
    restart: "serve",
    destroy: () => Promise.resolve(),
  };
}

async function postgres(): Promise<Store> {
  const probe = await probePostgres();
  const schema = testSchemaName();
  return {
    name: "postgres",
    available: probe.available,
    args: ["--postgres", probe.url, "--schema", schema],
    restart: "worker",
    destroy: async () => {
      const saver = await PostgresSaver.connect({ connectionString: probe.url, schema });
      await saver.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
      await saver.close();
    },
  };
}

const stores: ((dir: string) => Store | Promise<Store>)[] = [sqlite, () => postgres()];
const probe = await probePostgres();

describe.each(stores.map((make, i) => ({ make, name: i === 0 ? "sqlite" : "postgres" })))(
  "webhooks across a SIGKILL on $name",
  ({ make, name }) => {
    const procs: Proc[] = [];
    const cleanup: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const p of procs.splice(0)) p.child.kill("SIGKILL");
      for (const step of cleanup.splice(0)) await step();
    });

    it.skipIf(name === "postgres" && !probe.available)(
      "an event committed before the kill is delivered after the restart, once, under its id",
      async () => {
        const dir = mkdtempSync(join(tmpdir(), "rein-hooks-"));
        const store = await make(dir);
        const receiver = await TestReceiver.start();
        cleanup.push(
          () => receiver.close(),
          () => store.destroy(),
          () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
        );
        writeFileSync(join(dir, "tokens.json"), JSON.stringify(Object.values(TOKENS)));
        const common = [...store.args, "--graphs", TEST_GRAPHS];
        const server = await launchRein(
          [
            "serve",
            ...common,
            ...["--tokens", join(dir, "tokens.json"), "--port", "0", "--log-level", "silent"],
          ],
          /listening on (\S+)/,
          ENV,
        );
        procs.push(server);
        const url = server.url!;
        const created = (await cli(
          url,
          "add",
          receiver.url,
          "--events",
          "interrupt.pending,run.finished",
        )) as { id: string; secret: string };
        expect(created.secret).toMatch(/^whsec_/);
        const listed = await client(url, TOKENS["admin"]!.token)<{ items: { id: string }[] }>(
          "GET",
          "/webhooks",
        );
        expect(listed.body.items.map((w) => w.id)).toEqual([created.id]);

        // The first attempt is held open: the server dies between the commit and a delivery.
        let first = true;
        receiver.answer = () => (first ? ((first = false), "hold") : 204);
        const alice = client(url, TOKENS["alice"]!.token);
        for (const threadId of ["k-1", "k-2", "k-3"]) {
          await alice("POST", "/threads", { graph: "ask", threadId });
          await alice("POST", `/threads/${threadId}/runs`, { input: {}, wait: true });
        }
        await receiver.waitFor(() => receiver.received.length >= 1);
        const held = receiver.received[0]!;
        server.child.kill("SIGKILL");
        await new Promise((done) => server.child.once("exit", done));
        // Deliveries the receiver accepted before the kill whose success the dead process had
        // not yet recorded come again after the restart, under the same id: at least once.
        const acceptedBeforeKill = new Set(receiver.accepted.map((h) => h.id));
        const acceptedCount = receiver.accepted.length;

        const args =
          store.restart === "serve"
            ? [
                "serve",
                ...common,
                ...["--tokens", join(dir, "tokens.json"), "--port", "0", "--log-level", "silent"],
              ]
            : ["worker", ...common];
        const after = await launchRein(
          args,
          store.restart === "serve" ? /listening on (\S+)/ : /worker ready/,
          ENV,
        );
        procs.push(after);
        const threads = (): Set<unknown> =>
          new Set(receiver.accepted.map((h) => h.data["threadId"]));
        await receiver.waitFor(() => threads().size === 3, 15_000);

        // Each event under one id; the held one came again with its id and was accepted once.
        const byThread = new Map<unknown, Set<string>>();
        for (const h of receiver.received)
          byThread.set(
            h.data["threadId"],
            (byThread.get(h.data["threadId"]) ?? new Set()).add(h.id),
          );
        expect([...byThread.values()].map((ids) => ids.size)).toEqual([1, 1, 1]);
        expect(receiver.accepted.filter((h) => h.id === held.id)).toHaveLength(1);
        expect(new Set(receiver.accepted.map((h) => h.id)).size).toBe(3);
        // The restarted process delivers each event once; a second acceptance of an id is only
        // ever the repeat of one accepted before the kill.
        const afterRestart = receiver.accepted.slice(acceptedCount).map((h) => h.id);
        expect(new Set(afterRestart).size).toBe(afterRestart.length);
        for (const id of afterRestart.filter((id) => acceptedBeforeKill.has(id)))
          expect(receiver.accepted.filter((h) => h.id === id)).toHaveLength(2);
        for (const h of receiver.accepted)
          expect(
            new Webhook(created.secret).verify(h.body, {
              "webhook-id": h.id,
              "webhook-timestamp": h.timestamp,
              "webhook-signature": h.signature,
            }),
          ).toMatchObject({ type: "interrupt.pending" });

        if (store.restart === "serve") {
          const log = (await cli(after.url!, "deliveries", created.id)) as {
            eventId: string;
            status: string;
          }[];
          expect(log.map((d) => d.status)).toEqual(["delivered", "delivered", "delivered"]);
          expect(log.map((d) => d.eventId)).toContain(held.id);
        }
      },
      60_000,
    );
  },
);
