// A Rein graph served as an MCP tool: the refund waits for a person's approval, durably.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { START, StateGraph, lastValue } from "@rein/core";
import { registerGraphTool } from "@rein/mcp";
import { SqliteSaver } from "@rein/sqlite";
import { z } from "zod";

const refunds = new StateGraph({ order: lastValue<string>(), outcome: lastValue<string>() })
  .addNode("refund", (s, ctx) => {
    const { approved } = ctx.interrupt(`Refund order ${s.order}?`, {
      answer: z.object({ approved: z.boolean() }),
    });
    if (approved) console.error(`server: refunded ${s.order}`);
    return { outcome: approved ? `refunded ${s.order}` : "kept" };
  })
  .addEdge(START, "refund")
  .compile({ checkpointer: SqliteSaver.open("refunds.db") });

serveStdio(() => {
  const server = new McpServer({ name: "refunds", version: "1.0.0" });
  registerGraphTool(server, refunds, {
    name: "refund_order",
    inputSchema: z.object({ order: z.string() }),
    // Signs each requestState; the same key in every process that shares refunds.db.
    secret: process.env.REFUND_STATE_KEY!,
    result: (run) => ({ content: [{ type: "text", text: run.values.outcome }] }),
  });
  return server;
});
