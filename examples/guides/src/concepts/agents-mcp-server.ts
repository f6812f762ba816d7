/**
 * The MCP server of docs/agents.md's example (stdio, written with the official SDK): a ticket
 * lookup, and a delete that says on stderr each time it runs.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "tickets", version: "1.0.0" });
server.registerTool(
  "lookup_ticket",
  { description: "Read a ticket.", inputSchema: { id: z.string() } },
  ({ id }) => ({ content: [{ type: "text", text: `${id}: broken mug` }] }),
);
server.registerTool(
  "delete_ticket",
  { description: "Delete a ticket. Irreversible.", inputSchema: { id: z.string() } },
  ({ id }) => {
    console.error(`server: deleted ${id}`);
    return { content: [{ type: "text", text: `deleted ${id}` }] };
  },
);
await server.connect(new StdioServerTransport());
