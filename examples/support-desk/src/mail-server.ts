/**
 * The desk's mail tools as an MCP server (stdio, on the official SDK): the email sub-agent takes
 * its tools from here, as a team whose tools are shipped as MCP servers would. `send_email`
 * writes the message to the outbox under `DESK_DATA` (the demo's stand-in for a mail server),
 * named by the idempotency key each call carries in `_meta`, so a repeated call overwrites
 * rather than sends twice. Started by `mailTools()` in `agents.ts`.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { DeskFiles } from "./desk-data.ts";

const files = new DeskFiles(process.env["DESK_DATA"] ?? ".rein/support-desk");
const server = new McpServer({ name: "support-desk-mail", version: "1.0.0" });

server.registerTool(
  "send_email",
  {
    description: "Send an email to the customer.",
    inputSchema: { to: z.email(), subject: z.string().min(1), body: z.string().min(1) },
    annotations: { destructiveHint: true, idempotentHint: true },
  },
  (mail, extra) => {
    const key = extra._meta?.["rein.dev/idempotency-key"];
    if (typeof key !== "string")
      return { isError: true, content: [{ type: "text", text: "No idempotency key was sent." }] };
    return { content: [{ type: "text", text: files.send({ ...mail, idempotencyKey: key }) }] };
  },
);

await server.connect(new StdioServerTransport());
