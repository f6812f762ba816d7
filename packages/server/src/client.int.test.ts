/**
 * `@rein/client` against a real server: its routes match the OpenAPI document both ways, and
 * every method works over HTTP, SSE streams included.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ReinApiError, ReinClient, clientRoutes, type RunStreamEvent } from "@rein/client";
import {
  TOKENS,
  sqliteBackend,
  startTestServer,
  type TestServer,
  type TestStore,
} from "./testing/harness.ts";

describe("@rein/client over HTTP", () => {
  let store: TestStore;
  let server: TestServer;
  let rein: ReinClient;

  beforeEach(async () => {
    store = await sqliteBackend.create();
    server = await startTestServer(store.store);
    rein = new ReinClient({ baseUrl: server.url, token: TOKENS["alice"]!.token });
  });
  afterEach(async () => {
    await server.close();
    await store.destroy();
  });

  it("calls exactly the operations of the OpenAPI document", async () => {
    const doc = (await rein.openapi()) as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect([...clientRoutes].sort()).toEqual(documented.sort());
  });

  it("reads the metrics with a metrics token; another token is refused with the scope named", async () => {
    const scraping = await startTestServer(store.store, {
      metrics: { token: "scrape-0123456789" },
    });
    try {
      const scraper = new ReinClient({ baseUrl: scraping.url, token: "scrape-0123456789" });
      expect(await scraper.metrics()).toContain("# TYPE rein_approvals_pending gauge");
      const alice = new ReinClient({ baseUrl: scraping.url, token: TOKENS["alice"]!.token });
      const refused = await alice.metrics().catch((e: unknown) => e as ReinApiError);
      expect(refused).toBeInstanceOf(ReinApiError);
      expect((refused as ReinApiError).status).toBe(403);
      expect((refused as ReinApiError).code).toBe("forbidden");
    } finally {
      await scraping.close();
    }
  });

  it("tells a token who it is: subject, tenant and scopes", async () => {
    expect(await rein.whoami()).toEqual({
      subject: "alice@acme",
      tenant: "acme",
      scopes: ["read", "resume", "run"],
      groups: [],
      roles: [],
    });
    const bob = new ReinClient({ baseUrl: server.url, token: TOKENS["bob"]!.token });
    expect(await bob.whoami()).toMatchObject({ subject: "bob@globex", tenant: "globex" });
    const nobody = new ReinClient({ baseUrl: server.url, token: "not-a-token-at-all-000" });
    expect(await nobody.whoami().catch((e: unknown) => (e as ReinApiError).status)).toBe(401);
  });

  it("runs the approval flow: create, run, queue, resume with a target, steer, audit, state, history", async () => {
    expect((await rein.health()).graphs).toContain("desk");
    const thread = await rein.createThread({ graph: "desk", threadId: "c1" });
    expect(thread.status).toBe("idle");
    const paused = await rein.startRun("c1", { input: {}, wait: true });
    expect(paused.status).toBe("interrupted");
    const queue = await rein.listInterrupts({ threadId: "c1" });
    expect(queue.items).toHaveLength(2);
    const [first, second] = queue.items;
    await rein.steer("c1", {
      target: { runId: second!.runId, namespace: second!.namespace },
      text: "be kind",
    });
    const partly = await rein.resume(
      "c1",
      { target: { runId: first!.runId, namespace: first!.namespace }, resume: { type: "accept" } },
      { idempotencyKey: "k1" },
    );
    expect(partly.interrupts.map((i) => i.id)).toEqual([second!.id]);
    const stale = await rein
      .resume("c1", {
        target: { runId: first!.runId, namespace: first!.namespace },
        resume: { type: "accept" },
      })
      .catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(ReinApiError);
    expect((stale as ReinApiError).status).toBe(409);
    expect((stale as ReinApiError).stale).toBe(true);
    const invalid = await rein
      .resume("c1", { resumeMap: { [second!.id]: { type: 1 } } })
      .catch((e: unknown) => e);
    expect((invalid as ReinApiError).code).toBe("invalid_answer");
    const done = await rein.resume("c1", { resumeMap: { [second!.id]: { type: "accept" } } });
    expect(done.status).toBe("done");
    expect((await rein.getThread("c1")).status).toBe("done");
    expect((await rein.listAudit({ threadId: "c1" })).items.map((a) => a.action)).toEqual([
      "steer",
      "answer",
      "answer",
    ]);
    expect((await rein.getState("c1", { subgraphs: true })).values).toMatchObject({
      ticket: "T-1",
    });
    expect((await rein.getHistory("c1", { limit: 1 })).items).toHaveLength(1);
    expect((await rein.listThreads()).items.map((t) => t.threadId)).toEqual(["c1"]);
    const runs = await rein.listRuns("c1");
    const tree = await rein.getRun("c1", done.runId);
    expect(tree.children).toHaveLength(2);
    expect(runs.items).toHaveLength(3);
  });

  it("streams a run, joins it after an event id, and starts one in the background", async () => {
    await rein.createThread({ graph: "slow", threadId: "c2" });
    const events: RunStreamEvent[] = [];
    for await (const event of rein.streamRun("c2", {
      input: { steps: 2, ms: 20 },
      streamMode: ["custom"],
    }))
      events.push(event);
    expect(events.map((e) => e.event)).toEqual(["run", "custom", "custom", "end"]);
    const end = events[3];
    if (end?.event !== "end") throw new Error("expected end");
    expect(end.data.result.values).toMatchObject({ done: 2 });
    const run = events[0];
    if (run?.event !== "run") throw new Error("expected run");
    const rest: string[] = [];
    for await (const event of rein.joinRun("c2", run.data.runId, {
      streamMode: ["custom"],
      lastEventId: events[1]!.id!,
    }))
      rest.push(event.event);
    expect(rest).toEqual(["custom", "end"]);
    const accepted = await rein.startRun("c2", { input: { steps: 1, ms: 10 } });
    expect(accepted.status).toBe("queued");
    const joined: string[] = [];
    for await (const event of rein.joinRun("c2", accepted.runId)) joined.push(event.event);
    expect(joined.at(-1)).toBe("end");
  });

  it("watches the queue until aborted, and deletes with an admin token", async () => {
    await rein.createThread({ graph: "ask", threadId: "c3" });
    await rein.startRun("c3", { input: {}, wait: true });
    const controller = new AbortController();
    const pages: number[] = [];
    const watching = (async () => {
      try {
        for await (const page of rein.watchInterrupts({}, { signal: controller.signal })) {
          pages.push(page.items.length);
          if (pages.length === 1) await rein.resume("c3", { resume: { text: "ok" } });
          else controller.abort();
        }
      } catch (error) {
        if (!controller.signal.aborted) throw error;
      }
    })();
    await watching;
    expect(pages).toEqual([1, 0]);
    const admin = new ReinClient({ baseUrl: server.url, token: TOKENS["admin"]!.token });
    await admin.deleteThread("c3");
    const gone = await rein.getThread("c3").catch((e: unknown) => e);
    expect((gone as ReinApiError).status).toBe(404);
  });
});
