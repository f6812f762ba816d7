import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probePostgres, type PostgresTarget } from "./harness/postgres.ts";
import { resumeDone, sdkClient, startPaused } from "./protocol/client.ts";
import { executionsOf } from "./protocol/executions.ts";
import { executionsPerAnswer, measureGraph } from "./protocol/measure.ts";
import { startLangGraphPostgres, startRein, type ProtocolServer } from "./protocol/servers.ts";

// The protocol comparison's contracts in small counts, no timing asserted: the SDK-driven
// operations complete on each server, the executions counter sees every execution of an asking
// node in the server process (LangGraph re-runs the unanswered sub-agent, so it counts 1.5 per
// answer there), and Rein's layer runs exactly one node per answer.

let postgres: PostgresTarget;
beforeAll(async () => {
  postgres = await probePostgres();
  if (!postgres.ok && process.env["REIN_REQUIRE_POSTGRES"] === "1")
    throw new Error(postgres.reason);
});

describe("LangGraph's embed server on Postgres", { timeout: 180_000 }, () => {
  let server: ProtocolServer | undefined;
  afterAll(async () => server?.stop());

  it("pauses and completes both graphs through the SDK, and re-runs the unanswered sub-agent", async (ctx) => {
    if (!postgres.ok) return ctx.skip();
    server = await startLangGraphPostgres(postgres.url);
    const client = sdkClient(server.apiUrl);
    const paused = await startPaused(client, "fanout");
    expect(paused.pending).toHaveLength(2);
    expect(executionsOf(server.executions, new Set([paused.threadId]))).toBe(2);
    await resumeDone(client, "fanout", paused);

    const refund = await executionsPerAnswer(server, "refund", 3, 3);
    expect(refund).toEqual({ threads: 3, answers: 3, executions: 3, perAnswer: 1 });
    // First answer: both sub-agents run (one completes, one asks again); second: one.
    const fanout = await executionsPerAnswer(server, "fanout", 3, 3);
    expect(fanout).toEqual({ threads: 3, answers: 6, executions: 9, perAnswer: 1.5 });
  });
});

describe("rein serve's /langgraph layer", { timeout: 180_000 }, () => {
  const servers: ProtocolServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  /** Starts Rein on `store` and checks that it serves the layer where the bench looks for it. */
  async function rein(store: "sqlite" | "postgres"): Promise<ProtocolServer> {
    const server = await startRein(store, postgres.ok ? postgres.url : undefined);
    servers.push(server);
    const info = await fetch(`${server.apiUrl}/info`);
    await info.body?.cancel();
    expect(info.status).toBe(200);
    return server;
  }

  for (const store of ["sqlite", "postgres"] as const) {
    it(`answers every question with exactly one node execution (${store})`, async (ctx) => {
      if (store === "postgres" && !postgres.ok) return ctx.skip();
      const server = await rein(store);
      for (const graph of ["refund", "fanout"] as const) {
        const figures = await measureGraph(server, graph, { ops: 4, clients: 2, k: 3, warmup: 1 });
        expect(figures.start.ops).toBe(4);
        expect(figures.resume.ops).toBe(4);
        expect(figures.resume.serverCpuMs).toBeGreaterThan(0);
        if (store === "postgres") expect(figures.resume.backendCpuMs).toBeGreaterThan(0);
        const answers = graph === "refund" ? 3 : 6;
        expect(figures.executions).toEqual({
          threads: 3,
          answers,
          executions: answers,
          perAnswer: 1,
        });
      }
    });
  }
});
