/**
 * `threads.search` and `threads.count` of the SDK over many threads: a page is sorted and cut
 * from the thread records before any state is read, so a page of 3 reads the state of 3
 * threads, a count reads none, and the page is the same one a full listing gives.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  TOKENS,
  sqliteBackend,
  startTestServer,
  type TestServer,
  type TestStore,
} from "../testing/harness.ts";
import { graphs } from "../testing/graphs.ts";

describe.skipIf(!sqliteBackend.available)("LangGraph threads.search over many threads", () => {
  let store: TestStore;
  let server: TestServer;
  let alice: Client;
  /** Lease reads: one per thread whose protocol view (status, values) is built. */
  let views = 0;

  beforeAll(async () => {
    store = await sqliteBackend.create();
    const inner = store.store;
    const counted = new Proxy(inner, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (property === "getLease" && typeof value === "function")
          return (...args: unknown[]) => {
            views += 1;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        return typeof value === "function"
          ? (value as (...a: unknown[]) => unknown).bind(target)
          : value;
      },
    });
    server = await startTestServer(counted, { graphs });
    alice = new Client({
      apiUrl: `${server.url}/langgraph`,
      apiKey: TOKENS["alice"]!.token,
      callerOptions: { maxRetries: 0 },
    });
    for (let i = 0; i < 30; i++)
      await alice.threads.create({ metadata: { n: i, team: i % 3 === 0 ? "ops" : "dev" } });
  });
  afterAll(async () => {
    await server?.close();
    await store?.destroy();
  });

  it("reads the state of the page only, and pages as a full listing orders", async () => {
    views = 0;
    const all = await alice.threads.search({ limit: 1000, sortBy: "created_at", sortOrder: "asc" });
    expect(all).toHaveLength(30);
    expect(views).toBe(30);

    views = 0;
    const page = await alice.threads.search({
      limit: 3,
      offset: 5,
      sortBy: "created_at",
      sortOrder: "asc",
    });
    expect(views).toBe(3);
    expect(page.map((t) => t.thread_id)).toEqual(all.slice(5, 8).map((t) => t.thread_id));

    views = 0;
    const ops = await alice.threads.search({ metadata: { team: "ops" }, limit: 2 });
    expect(views).toBe(2);
    expect(ops.every((t) => t.metadata?.["team"] === "ops")).toBe(true);

    views = 0;
    expect(await alice.threads.count({})).toBe(30);
    expect(await alice.threads.count({ metadata: { team: "ops" } })).toBe(10);
    expect(views).toBe(0);
    // A status filter needs every candidate's state, and still counts right.
    expect(await alice.threads.count({ status: "idle" })).toBe(30);
  });
});
