/**
 * The approval queue at size over real HTTP, on SQLite and on Postgres: 10,000 pending questions
 * page through by cursor with no cap, each page says how many there are in all, and the count
 * follows the filters and the tenant.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Checkpointer } from "@rein/core";
import {
  checkpointId,
  makeInterrupt,
  makeOutcome,
  pausedResult,
  runId,
  taskId,
} from "@rein/core/testing";
import {
  TOKENS,
  client,
  postgresBackend,
  sqliteBackend,
  startTestServer,
  type Backend,
  type TestServer,
  type TestStore,
} from "./testing/harness.ts";

type Page = { items: { id: string }[]; nextCursor: string | null; total: number };

const THREADS = 100;
const PER_THREAD = 100;

/** 10,000 pending sub-agent questions of the app `desk`, tenant acme: 100 threads of 100. */
async function seed(store: Checkpointer): Promise<void> {
  for (let t = 0; t < THREADS; t++) {
    const thread = `bulk-${t}`;
    const interrupts = Array.from({ length: PER_THREAD }, (_, i) =>
      makeInterrupt(thread, `bulk-${t}-${i}`, {
        tenant: "acme",
        graph: "refund_agent",
        taskId: taskId(`task-${i}`),
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, t * PER_THREAD + i)).toISOString(),
        path: [
          { runId: runId(`root-${t}`), graph: "desk", node: "refund", taskId: taskId("tp") },
          {
            runId: runId("run-1"),
            graph: "refund_agent",
            node: "review",
            taskId: taskId(`task-${i}`),
          },
        ],
      }),
    );
    await store.putTaskOutcome(
      makeOutcome(thread, checkpointId(1), pausedResult("task-0"), { interrupts }),
    );
  }
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`the approval queue at 10,000 on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;
    beforeEach(async () => {
      store = await backend.create();
      await seed(store.store);
      server = await startTestServer(store.store);
    }, 120_000);
    afterEach(async () => {
      await server.close();
      await store.destroy();
    });

    it("pages through all 10,000 pending by cursor, each page counting them all", async () => {
      const alice = client(server.url, TOKENS["alice"]!.token);
      const seen = new Set<string>();
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = `/interrupts?graph=desk&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const page: { status: number; body: Page } = await alice<Page>("GET", query);
        expect(page.status).toBe(200);
        expect(page.body.total).toBe(THREADS * PER_THREAD);
        for (const item of page.body.items) seen.add(item.id);
        cursor = page.body.nextCursor;
        pages += 1;
      } while (cursor !== null);
      expect(seen.size).toBe(THREADS * PER_THREAD);
      expect(pages).toBe((THREADS * PER_THREAD) / 500);
    }, 120_000);

    it("counts what the filters and the tenant leave", async () => {
      const alice = client(server.url, TOKENS["alice"]!.token);
      const total = async (query: string, token = alice) =>
        (await token<Page>("GET", `/interrupts${query}`)).body.total;
      expect(await total("?subAgentGraph=refund_agent&limit=1")).toBe(10_000);
      expect(await total("?graph=desk&subAgentGraph=refund_agent&limit=1")).toBe(10_000);
      expect(await total("?graph=refund_agent")).toBe(0);
      expect(await total("?status=answered")).toBe(0);
      // Another tenant's reviewer counts none of acme's questions.
      expect(await total("", client(server.url, TOKENS["bob"]!.token))).toBe(0);
    }, 60_000);
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
