/**
 * The agent contract suite's vocabulary: scripted turns, what an adapter test records, how an
 * adapter plugs in, and the suite's agent (one `refund` tool behind an approval).
 */
import { z } from "zod";
import { MemorySaver } from "../../checkpoint/memory.ts";
import { agent } from "../../prebuilt/agent.ts";
import type { Model, ToolCall } from "../../prebuilt/messages.ts";
import { tool } from "../../prebuilt/tool-node.ts";

/** One scripted model answer: text, tool calls, usage. */
export interface ScriptedTurn {
  text?: string;
  toolCalls?: ToolCall[];
  usage?: { inputTokens: number; outputTokens: number };
  /**
   * The answer fails instead, in the client's own wire format: `"error"` (the provider reports
   * an error, as an error event or failed response), `"cut"` (the answer stops at the
   * output-token limit), and on a stream only `"truncated"` (the stream ends cleanly before its
   * terminal event) or `"dropped"` (the connection breaks mid-stream). The text, if any, is what
   * arrived before.
   */
  fail?: "error" | "cut" | "truncated" | "dropped";
  /** The call never answers until the run's signal aborts it (the client rejects then). */
  hang?: boolean;
  /**
   * A call the provider runs itself (a hosted MCP tool): without `output`, the provider asks
   * approval for it first (`approvalId`); with `output`, it ran it and reports the result.
   */
  providerCall?: {
    id: string;
    name: string;
    args: Record<string, unknown>;
    approvalId: string;
    output?: string;
  };
}

/** What the client library was sent on one call, as the adapter test recorded it. */
export interface RecordedRequest {
  /** Names of the tools the client was given. */
  tools: string[];
  /** The request as the client sent it (JSON text of the body or of the call's arguments). */
  body: string;
}

/** A scripted model behind an adapter, and what its client received. */
export interface ScriptedAdapter {
  model: Model;
  requests(): RecordedRequest[];
}

/** How one adapter plugs into the suite. */
export interface AgentAdapterInitializer {
  name: string;
  /** A Rein model over the real client, answering `turns` in order; `stream` asks for streaming. */
  create(turns: ScriptedTurn[], options: { stream: boolean }): ScriptedAdapter;
  /** Contracts this adapter cannot meet, each with the reason (the suite checks them as gaps). */
  gaps?: {
    streaming?: string;
    usage?: string;
    /**
     * The client reports a failed (not streamed) answer only as an HTTP error of its own kind
     * (kept as it is, so retry policies still see a rate limit as one): the run ends `error`,
     * with the client's error rather than `model_failed`.
     */
    failedResponse?: string;
  };
  /**
   * The client library and version the adapter runs on. In a test project that names a client
   * (`REIN_CLIENT_UNDER_TEST`, e.g. `ai@7`), the suite checks it is that one.
   */
  client?: { name: string; version: string };
  /** How a declined call shows in the next request to the client (e.g. `execution-denied`). */
  declinedAs?: RegExp;
  /**
   * Set when the client has the provider's own approval convention (the AI SDK's
   * `tool-approval-request`, OpenAI's `mcp_approval_request`): how an approval and a denial of
   * `approvalId` show in the next request.
   */
  providerApprovals?: {
    approvedAs: (approvalId: string) => RegExp;
    deniedAs: (approvalId: string, reason: string) => RegExp;
  };
}

const refundArgs = z.object({ orderId: z.string(), amount: z.number().positive() });

/** The suite's script: a refund call, then the final answer. */
export function script(): ScriptedTurn[] {
  return [
    {
      text: "Refunding the order.",
      toolCalls: [{ id: "call_1", name: "refund", args: { orderId: "1042", amount: 50 } }],
      usage: { inputTokens: 30, outputTokens: 12 },
    },
    { text: "Refunded $25 for order 1042.", usage: { inputTokens: 60, outputTokens: 9 } },
  ];
}

/** The agent of the suite: one `refund` tool that needs approval, over the adapter's model. */
export function setup(init: AgentAdapterInitializer, stream = false, turns = script()) {
  const executed: { args: z.infer<typeof refundArgs>; key: string }[] = [];
  const adapter = init.create(turns, { stream });
  const graph = agent({
    model: adapter.model,
    tools: [
      tool({
        name: "refund",
        description: "Refund an order.",
        schema: refundArgs,
        run: (args, ctx) => {
          executed.push({ args, key: ctx.idempotencyKey });
          return { refunded: args.amount };
        },
      }),
    ],
    approve: ["refund"],
    checkpointer: new MemorySaver(),
  });
  return { graph, executed, adapter };
}
