/**
 * The protocol's streams and sub-agents with LangGraph's client, over real HTTP on SQLite and
 * Postgres: sub-agents' questions keyed by the root task that runs them, `mode|ns` events with
 * `stream_subgraphs`, a join resuming after `Last-Event-ID`, Agent Inbox and agent-chat-ui
 * decisions answering one sub-agent at a time, and CORS for a browser on an allowed origin.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@langchain/langgraph-sdk";
import {
  TOKENS,
  postgresBackend,
  readSse,
  sqliteBackend,
  startTestServer,
  type Backend,
  type TestServer,
  type TestStore,
} from "../testing/harness.ts";
import { graphs } from "../testing/graphs.ts";

type Part = { event: string; data: unknown; id?: string };
type Interrupts = { id: string; value: Record<string, unknown>; namespace: string[] }[];

async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

const ORIGIN = "https://app.example";

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`LangGraph streams and sub-agents on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;
    let alice: Client;

    beforeAll(async () => {
      store = await backend.create();
      server = await startTestServer(store.store, { graphs, corsOrigins: [ORIGIN] });
      alice = new Client({
        apiUrl: `${server.url}/langgraph`,
        apiKey: TOKENS["alice"]!.token,
        callerOptions: { maxRetries: 0 },
      });
    });
    afterAll(async () => {
      await server?.close();
      await store?.destroy();
    });

    it("names sub-agents' events mode|ns with stream_subgraphs and keys their questions by the root task", async () => {
      const thread = await alice.threads.create({ graphId: "desk" });
      const parts = await collect(
        alice.runs.stream(thread.thread_id, "desk", {
          input: { ticket: "T-9" },
          streamMode: ["values", "updates"],
          streamSubgraphs: true,
        }),
      );
      const names = new Set(parts.map((p) => p.event));
      expect([...names].some((n) => n.startsWith("values|refund_agent"))).toBe(true);
      expect([...names].some((n) => n.startsWith("updates|email_agent"))).toBe(true);
      const paused = parts.filter((p) => p.event === "values").at(-1)?.data as {
        __interrupt__: Interrupts;
      };
      expect(paused.__interrupt__).toHaveLength(2);
      const state = await alice.threads.getState(thread.thread_id);
      const byNode = Object.fromEntries(
        state.tasks.map((t) => [t.name, t.interrupts.map((i) => i.id)]),
      );
      const refund = paused.__interrupt__.find((i) => i.namespace[0]?.startsWith("refund_agent"))!;
      expect(byNode["refund_agent"]).toEqual([refund.id]);
      const got = await alice.threads.get(thread.thread_id);
      const refundTask = state.tasks.find((t) => t.name === "refund_agent")!;
      expect(got.interrupts[refundTask.id]!.map((i) => i.id)).toEqual([refund.id]);

      const quiet = await collect(
        alice.runs.stream(thread.thread_id, "desk", {
          command: { resume: { [refund.id]: [{ type: "accept", args: null }] } },
          streamMode: ["values"],
        }),
      );
      expect(quiet.every((p) => !p.event.includes("|"))).toBe(true);
      const after = quiet.filter((p) => p.event === "values").at(-1)?.data as {
        log: string[];
        __interrupt__: Interrupts;
      };
      expect(after.__interrupt__.map((i) => i.id)).not.toContain(refund.id);
      expect(after.__interrupt__).toHaveLength(1);
      const email = after.__interrupt__[0]!;
      const last = await alice.runs.wait(thread.thread_id, "desk", {
        command: {
          resume: { [email.id]: { decisions: [{ type: "reject", message: "not now" }] } },
        },
      });
      expect((last as { log: string[] }).log).toEqual(
        expect.arrayContaining([
          'refund_agent: refund {"ticket":"T-9","amount":50}',
          "email_agent: skipped (respond)",
        ]),
      );
    });

    it("resumes a join after Last-Event-ID without repeating events", async () => {
      const thread = await alice.threads.create({ graphId: "slow" });
      const run = await alice.runs.create(thread.thread_id, "slow", {
        input: { steps: 4, ms: 40 },
        streamMode: ["custom"],
      });
      const url = `${server.url}/langgraph/threads/${thread.thread_id}/runs/${run.run_id}/stream?stream_mode=custom`;
      const headers = { "x-api-key": TOKENS["alice"]!.token };
      const first = await readSse(await fetch(url, { headers }), (e) => e.event === "custom");
      const seen = first.find((e) => e.event === "custom")!;
      expect(first[0]?.event).toBe("metadata");
      const rest = await readSse(
        await fetch(url, { headers: { ...headers, "last-event-id": seen.id! } }),
      );
      expect(rest.some((e) => e.event === "metadata")).toBe(false);
      const ticks = rest
        .filter((e) => e.event === "custom")
        .map((e) => (e.data as { tick: number }).tick);
      const seenTick = (seen.data as { tick: number }).tick;
      expect(ticks).toEqual(Array.from({ length: 3 - seenTick }, (_, i) => seenTick + 1 + i));
    });

    it("keeps a quiet stream alive with comment pings, and finds threads as agent-chat-ui searches them", async () => {
      const thread = await alice.threads.create({ graphId: "slow" });
      const response = await fetch(
        `${server.url}/langgraph/threads/${thread.thread_id}/runs/stream`,
        {
          method: "POST",
          headers: { "x-api-key": TOKENS["alice"]!.token, "content-type": "application/json" },
          body: JSON.stringify({
            assistant_id: "slow",
            input: { steps: 3, ms: 200 },
            stream_mode: "custom",
          }),
        },
      );
      const text = await response.text();
      expect(text).toContain(": ping");
      expect(text.indexOf("event: metadata")).toBeLessThan(text.indexOf("event: custom"));
      expect(text.indexOf("event: custom")).toBeGreaterThan(0);
      const byUuid = await alice.threads.search({
        metadata: { assistant_id: (await alice.assistants.get("slow")).assistant_id },
      });
      expect(byUuid.map((t) => t.thread_id)).toContain(thread.thread_id);
    });

    it("answers a browser on an allowed origin, preflight and stream included", async () => {
      const preflight = await fetch(`${server.url}/langgraph/threads/search`, {
        method: "OPTIONS",
        headers: {
          origin: ORIGIN,
          "access-control-request-method": "PATCH",
          "access-control-request-headers": "x-api-key, content-type",
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-headers")).toContain("x-api-key");
      expect(preflight.headers.get("access-control-allow-methods")).toContain("PATCH");
      const thread = await alice.threads.create({ graphId: "slow" });
      const response = await fetch(
        `${server.url}/langgraph/threads/${thread.thread_id}/runs/stream`,
        {
          method: "POST",
          headers: {
            origin: ORIGIN,
            "x-api-key": TOKENS["alice"]!.token,
            "content-type": "application/json",
          },
          body: JSON.stringify({ assistant_id: "slow", input: { steps: 1, ms: 1 } }),
        },
      );
      expect(response.headers.get("access-control-allow-origin")).toBe(ORIGIN);
      expect(response.headers.get("access-control-expose-headers")).toContain("content-location");
      expect(response.headers.get("content-location")).toMatch(/^\/threads\/.+\/runs\/.+$/);
      await readSse(response);
      const other = await fetch(`${server.url}/langgraph/info`, {
        headers: { origin: "https://evil.example" },
      });
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
