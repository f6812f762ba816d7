/**
 * A model's tokens on the legacy routes, read with `@langchain/langgraph-sdk` 1.15's
 * `client.runs.stream()` and `streamMode: ["messages-tuple"]`: the prebuilt agent's model streams
 * its reply, which arrives as `messages` events `[AIMessageChunk, metadata]` of one id (text, the
 * tool calls as chunks, the usage), is not sent whole again, and shows under that id in the
 * values; the approved run's tool results come whole and its answer streams the same way.
 */
import { Client } from "@langchain/langgraph-sdk";
import { MessageTupleManager } from "@langchain/langgraph-sdk/ui";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  TOKENS,
  postgresBackend,
  sqliteBackend,
  type Backend,
  startTestServer,
  type TestServer,
  type TestStore,
} from "../testing/harness.ts";
import { streamingAgent } from "../testing/streaming-agent.ts";

type Json = Record<string, unknown>;
type Part = { event: string; data: unknown };

async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

/** The `messages` tuples of a stream. */
function tuples(parts: Part[]): [Json, Json][] {
  return parts.filter((p) => p.event === "messages").map((p) => p.data as [Json, Json]);
}

/** The last `values` of a stream's messages. */
function lastMessages(parts: Part[]): Json[] {
  const values = parts.filter((p) => p.event === "values").at(-1)?.data as { messages: Json[] };
  return values.messages;
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`LangGraph messages-tuple tokens on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;
    let sdk: Client;

    beforeEach(async () => {
      store = await backend.create();
      server = await startTestServer(store.store, { graphs: { streamer: streamingAgent } });
      sdk = new Client({
        apiUrl: `${server.url}/langgraph`,
        apiKey: TOKENS["alice"]!.token,
        callerOptions: { maxRetries: 0 },
      });
    });
    afterEach(async () => {
      await server.close();
      await store.destroy();
    });

    it("streams the model's reply as chunks of one id, sent once, and the approved run's too", async () => {
      const thread = await sdk.threads.create();
      const first = await collect(
        sdk.runs.stream(thread.thread_id, "streamer", {
          input: { messages: [{ type: "human", content: "refund A-1", id: "h1" }] },
          streamMode: ["values", "messages-tuple"],
        }),
      );
      const chunks = tuples(first);
      // Every tuple is a chunk of the model's reply, with the node that streamed it: the reply is
      // not sent again whole (nor the human input).
      expect(chunks.length).toBeGreaterThan(0);
      const replyId = chunks[0]![0]["id"] as string;
      expect(typeof replyId).toBe("string");
      for (const [chunk, metadata] of chunks) {
        expect(chunk).toMatchObject({ type: "AIMessageChunk", id: replyId });
        expect(metadata).toMatchObject({ langgraph_node: "model" });
      }
      expect(chunks.map(([c]) => c["content"]).filter((t) => t !== "")).toEqual([
        "Let me ",
        "check.",
      ]);
      const calls = chunks.flatMap(([c]) => c["tool_call_chunks"] as Json[]);
      expect(calls).toEqual([
        {
          type: "tool_call_chunk",
          id: "call_look",
          name: "lookup",
          args: '{"order":"A-1"}',
          index: 0,
        },
        {
          type: "tool_call_chunk",
          id: "call_pay",
          name: "refund",
          args: '{"amount":50}',
          index: 1,
        },
      ]);
      expect(chunks.find(([c]) => c["usage_metadata"])?.[0]["usage_metadata"]).toEqual({
        input_tokens: 12,
        output_tokens: 7,
        total_tokens: 19,
      });
      // The SDK's own tuple manager (what useStream feeds) merges them into one message.
      const manager = new MessageTupleManager();
      for (const [chunk, metadata] of chunks)
        manager.add(structuredClone(chunk) as never, metadata);
      const merged = manager.get(replyId)?.chunk as unknown as {
        content: unknown;
        tool_calls: { id: string; name: string; args: unknown }[];
      };
      expect(merged.content).toBe("Let me check.");
      expect(merged.tool_calls.map((c) => [c.id, c.name, c.args])).toEqual([
        ["call_look", "lookup", { order: "A-1" }],
        ["call_pay", "refund", { amount: 50 }],
      ]);
      // The paused state shows the reply under the id its chunks had: a client merges them.
      const paused = lastMessages(first);
      expect(paused.map((m) => [m["type"], m["id"]])).toEqual([
        ["human", "h1"],
        ["ai", replyId],
      ]);
      expect(paused[1]).toMatchObject({ content: "Let me check." });

      const second = await collect(
        sdk.runs.stream(thread.thread_id, "streamer", {
          command: { resume: { decisions: [{ type: "approve" }] } },
          streamMode: ["values", "messages-tuple"],
        }),
      );
      const resumed = tuples(second);
      // The tool results come whole (they were not streamed), then the answer's chunks.
      const whole = resumed.filter(([m]) => m["type"] !== "AIMessageChunk");
      expect(whole.map(([m]) => [m["type"], m["tool_call_id"]])).toEqual([
        ["tool", "call_look"],
        ["tool", "call_pay"],
      ]);
      const answer = resumed.filter(([m]) => m["type"] === "AIMessageChunk");
      const answerId = answer[0]![0]["id"] as string;
      expect(answerId).not.toBe(replyId);
      expect(answer.every(([m]) => m["id"] === answerId)).toBe(true);
      expect(answer.map(([m]) => m["content"])).toEqual(["Refunded ", "50."]);
      const done = lastMessages(second);
      expect(done.map((m) => m["type"])).toEqual(["human", "ai", "tool", "tool", "ai"]);
      expect(done[4]).toMatchObject({ id: answerId, content: "Refunded 50." });

      // A stream that does not ask for tuples gets no tokens: the run streams them only when asked.
      const quiet = await sdk.threads.create();
      const plain = await collect(
        sdk.runs.stream(quiet.thread_id, "streamer", {
          input: { messages: [{ type: "human", content: "refund A-1" }] },
          streamMode: ["values", "updates"],
        }),
      );
      expect(plain.some((p) => p.event === "messages")).toBe(false);
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
