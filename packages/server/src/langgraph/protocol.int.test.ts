/**
 * LangGraph's own client (`@langchain/langgraph-sdk` 1.15) against Rein's protocol layer over
 * real HTTP, on SQLite and Postgres: assistants are the served graphs, a thread takes its graph
 * on its first run, an approval streams and resumes with `command: { resume }`, parallel
 * questions are answered one at a time without re-running the sibling, and ambiguous, stale or
 * misplaced answers are refused with nothing changed.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@langchain/langgraph-sdk";
import {
  TOKENS,
  postgresBackend,
  snapshotStore,
  sqliteBackend,
  startTestServer,
  type Backend,
  type TestServer,
  type TestStore,
} from "../testing/harness.ts";
import { graphs } from "../testing/graphs.ts";
import { executions, langGraphGraphs } from "../testing/langgraph-graphs.ts";
import { assistantUuidOf } from "./mapping/assistants.ts";

type Part = { event: string; data: unknown; id?: string };

/** A client of the protocol layer with a token, as a LangGraph app makes one. */
function sdk(server: TestServer, token: string): Client {
  return new Client({
    apiUrl: `${server.url}/langgraph`,
    apiKey: token,
    callerOptions: { maxRetries: 0 },
  });
}

/** Every part of a stream. */
async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

/** The HTTP status and body of a refused SDK call. */
async function refusal(
  call: Promise<unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  try {
    await call;
  } catch (error) {
    const { status, message } = error as { status: number; message: string };
    const json = message.slice(message.indexOf("{"));
    return { status, body: JSON.parse(json) as Record<string, unknown> };
  }
  throw new Error("The call was not refused.");
}

type Interrupts = { id: string; value: Record<string, unknown> }[];

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`LangGraph SDK against Rein on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;
    let alice: Client;

    beforeAll(async () => {
      store = await backend.create();
      server = await startTestServer(store.store, { graphs: { ...graphs, ...langGraphGraphs } });
      alice = sdk(server, TOKENS["alice"]!.token);
    });
    afterAll(async () => {
      await server?.close();
      await store?.destroy();
    });

    it("serves the graphs as assistants, by name and by LangGraph's UUID", async () => {
      const info = await fetch(`${server.url}/langgraph/info`);
      expect(info.ok).toBe(true);
      const found = await alice.assistants.search({ graphId: "fanout" });
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({
        graph_id: "fanout",
        assistant_id: assistantUuidOf("fanout"),
      });
      expect((await alice.assistants.get("fanout")).graph_id).toBe("fanout");
      expect((await alice.assistants.get(assistantUuidOf("fanout"))).graph_id).toBe("fanout");
      expect(await alice.assistants.count()).toBe(
        Object.keys({ ...graphs, ...langGraphGraphs }).length,
      );
      const drawing = await alice.assistants.getGraph("fanout");
      expect(drawing.nodes.map((n) => n.id)).toEqual(["__start__", "left", "right", "__end__"]);
    });

    it("streams an approval and resumes it with command.resume, as agent-chat-ui does", async () => {
      const thread = await alice.threads.create();
      expect(thread.status).toBe("idle");
      let created: { run_id: string } | undefined;
      const first = await collect(
        alice.runs.stream(thread.thread_id, "refund-agent", {
          input: { messages: [{ type: "human", content: "Refund order A-1" }] },
          streamMode: ["values", "updates", "messages-tuple"],
          onRunCreated: (meta) => (created = meta),
        }),
      );
      expect(first[0]?.event).toBe("metadata");
      expect(created?.run_id).toBe((first[0]?.data as { run_id: string }).run_id);
      const paused = first.filter((p) => p.event === "values").at(-1)?.data as {
        messages: Record<string, unknown>[];
        __interrupt__: Interrupts;
      };
      expect(paused.__interrupt__).toHaveLength(1);
      const question = paused.__interrupt__[0]!;
      expect(question.value).toMatchObject({
        action_requests: [{ name: "refund", args: { order: "A-1", amount: 50 } }],
        review_configs: [
          {
            action_name: "refund",
            allowed_decisions: expect.arrayContaining(["approve"]) as string[],
          },
        ],
        action_request: { action: "refund", args: { order: "A-1", amount: 50 } },
      });
      expect(paused.messages.map((m) => m["type"])).toEqual(["human", "ai"]);
      expect(paused.messages[1]).toMatchObject({ tool_calls: [{ id: "call_1", name: "refund" }] });
      expect(first.some((p) => p.event === "messages")).toBe(true);
      expect(first.every((p) => p.event === "metadata" || p.id !== undefined)).toBe(true);

      const interrupted = await alice.threads.get(thread.thread_id);
      expect(interrupted.status).toBe("interrupted");
      expect(interrupted.metadata).toMatchObject({ graph_id: "refund-agent" });
      const keyed = Object.values(interrupted.interrupts).flat();
      expect(keyed.map((i) => i.id)).toEqual([question.id]);
      const state = await alice.threads.getState(thread.thread_id);
      expect(state.tasks.flatMap((t) => t.interrupts.map((i) => i.id))).toEqual([question.id]);
      expect(state.next).toEqual(["tools"]);

      const second = await collect(
        alice.runs.stream(thread.thread_id, "refund-agent", {
          command: { resume: { decisions: [{ type: "approve" }] } },
          streamMode: ["values"],
        }),
      );
      const done = second.filter((p) => p.event === "values").at(-1)?.data as {
        messages: Record<string, unknown>[];
      };
      expect(done.messages.map((m) => m["type"])).toEqual(["human", "ai", "tool", "ai"]);
      expect(done.messages[2]).toMatchObject({
        tool_call_id: "call_1",
        content: "refunded 50 on A-1",
      });
      expect(done).not.toHaveProperty("__interrupt__");
      expect((await alice.threads.get(thread.thread_id)).status).toBe("idle");
      const history = await alice.threads.getHistory(thread.thread_id, { limit: 3 });
      expect(history).toHaveLength(3);
      expect(history[0]!.checkpoint.checkpoint_id).toBe(
        (await alice.threads.getState(thread.thread_id)).checkpoint.checkpoint_id,
      );
    });

    it("answers one of two parallel questions by id and leaves the other pending, its node not re-run", async () => {
      const thread = await alice.threads.create();
      const paused = (await alice.runs.wait(thread.thread_id, "fanout", {
        input: { topic: "t" },
      })) as {
        __interrupt__: Interrupts;
      };
      expect(paused.__interrupt__).toHaveLength(2);
      const [left, right] = ["left", "right"].map((node) =>
        paused.__interrupt__.find((i) => i.value["question"] === `${node}?`)!,
      );
      expect(executions(thread.thread_id, "left")).toBe(1);
      expect(executions(thread.thread_id, "right")).toBe(1);

      // One answer while two are pending: ambiguous, refused, nothing changed.
      let before = await snapshotStore(server.store);
      const ambiguous = await refusal(
        alice.runs.wait(thread.thread_id, "fanout", { command: { resume: "yes" } }),
      );
      expect(ambiguous.status).toBe(409);
      expect(ambiguous.body).toMatchObject({
        error: "ambiguous_resume",
        detail: expect.any(String) as string,
      });
      expect(JSON.stringify(ambiguous.body)).toContain(left!.id);
      expect(JSON.stringify(ambiguous.body)).toContain(right!.id);
      expect(await snapshotStore(server.store)).toBe(before);

      // New input while questions are pending: refused, the questions kept.
      const input = await refusal(
        alice.runs.wait(thread.thread_id, "fanout", { input: { topic: "u" } }),
      );
      expect(input.status).toBe(409);
      expect(input.body["error"]).toBe("thread_interrupted");
      expect(await snapshotStore(server.store)).toBe(before);

      const afterLeft = (await alice.runs.wait(thread.thread_id, "fanout", {
        command: { resume: { [left!.id]: "go left" } },
      })) as { __interrupt__: Interrupts };
      expect(afterLeft.__interrupt__.map((i) => i.id)).toEqual([right!.id]);
      expect(executions(thread.thread_id, "left")).toBe(2);
      expect(executions(thread.thread_id, "right")).toBe(1);

      // The answered id again: stale, refused, nothing changed.
      before = await snapshotStore(server.store);
      const stale = await refusal(
        alice.runs.wait(thread.thread_id, "fanout", {
          command: { resume: { [left!.id]: "again" } },
        }),
      );
      expect(stale.status).toBe(409);
      expect(stale.body["error"]).toBe("stale_target");
      const unknown = await refusal(
        alice.runs.wait(thread.thread_id, "fanout", {
          command: { resume: { i_AAAAAAAAAAAAAAAAAAAAAA: "x" } },
        }),
      );
      expect(unknown.status).toBe(409);
      expect(await snapshotStore(server.store)).toBe(before);

      const finished = (await alice.runs.wait(thread.thread_id, "fanout", {
        command: { resume: { [right!.id]: "go right" } },
      })) as { answers: string[]; __interrupt__?: unknown };
      expect(finished.__interrupt__).toBeUndefined();
      expect([...finished.answers].sort()).toEqual(["left: go left", "right: go right"]);
      expect(executions(thread.thread_id, "left")).toBe(2);
      expect(executions(thread.thread_id, "right")).toBe(2);
      expect((await alice.threads.get(thread.thread_id)).status).toBe("idle");
    });

    it("creates background runs that can be read, listed, joined and streamed", async () => {
      const thread = await alice.threads.create({ graphId: "fanout" });
      const run = await alice.runs.create(thread.thread_id, "fanout", { input: { topic: "bg" } });
      expect(["pending", "running", "success"]).toContain(run.status);
      const joined = (await alice.runs.join(thread.thread_id, run.run_id)) as {
        __interrupt__: Interrupts;
      };
      expect(joined.__interrupt__).toHaveLength(2);
      const got = await alice.runs.get(thread.thread_id, run.run_id);
      expect(got).toMatchObject({
        run_id: run.run_id,
        thread_id: thread.thread_id,
        status: "success",
      });
      const listed = await alice.runs.list(thread.thread_id);
      expect(listed.map((r) => r.run_id)).toEqual([run.run_id]);
      const replay = await collect(alice.runs.joinStream(thread.thread_id, run.run_id));
      const last = replay.filter((p) => p.event === "values").at(-1)?.data as {
        __interrupt__: Interrupts;
      };
      expect(last.__interrupt__).toHaveLength(2);
      const found = await alice.threads.search({
        status: "interrupted",
        metadata: { graph_id: "fanout" },
      });
      expect(found.map((t) => t.thread_id)).toContain(thread.thread_id);
      expect(await alice.threads.count({ status: "interrupted" })).toBeGreaterThanOrEqual(1);
    });

    it("keeps tenants apart: another tenant's key sees no thread of this one", async () => {
      const thread = await alice.threads.create();
      const bob = sdk(server, TOKENS["bob"]!.token);
      expect((await refusal(bob.threads.get(thread.thread_id))).status).toBe(404);
      expect((await bob.threads.search({ limit: 100 })).map((t) => t.thread_id)).not.toContain(
        thread.thread_id,
      );
      const anonymous = new Client({
        apiUrl: `${server.url}/langgraph`,
        apiKey: null,
        callerOptions: { maxRetries: 0 },
      });
      expect((await refusal(anonymous.threads.search())).status).toBe(401);
    });

    it("answers 501 naming the feature for routes Rein does not serve, and 4xx for bad input", async () => {
      const store501 = await refusal(alice.store.putItem(["a"], "k", { v: 1 }));
      expect(store501.status).toBe(501);
      expect(store501.body).toMatchObject({
        error: "not_implemented",
        details: { feature: "The long-term store" },
      });
      expect((await refusal(alice.crons.create("fanout", { schedule: "* * * * *" }))).status).toBe(
        501,
      );
      const before = await snapshotStore(server.store);
      const thread = await alice.threads.create();
      const unknown = await refusal(alice.runs.wait(thread.thread_id, "nope", { input: {} }));
      expect(unknown.status).toBe(404);
      const response = await fetch(
        `${server.url}/langgraph/threads/${thread.thread_id}/runs/wait`,
        {
          method: "POST",
          headers: { "x-api-key": TOKENS["alice"]!.token, "content-type": "application/json" },
          body: JSON.stringify({ assistant_id: "fanout", stream_mode: 42 }),
        },
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        error: "invalid_input",
        detail: expect.any(String) as string,
      });
      const admin = sdk(server, TOKENS["admin"]!.token);
      // Deleting a run is not served (a run's checkpoints are its thread's history): 501 naming
      // it, even to an admin, and nothing changes.
      const runDelete = await refusal(admin.runs.delete(thread.thread_id, randomUUID()));
      expect(runDelete.status).toBe(501);
      expect(runDelete.body).toMatchObject({
        error: "not_implemented",
        details: { feature: "Deleting a run" },
      });
      await admin.threads.delete(thread.thread_id);
      expect(await snapshotStore(server.store)).toBe(before);
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
