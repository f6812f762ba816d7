// An MCP server (protocol revision 2026-07-28) whose refund asks for a person's confirmation
// with an `input_required` result, and runs only once it is given.
import { McpServer, acceptedContent, inputRequired } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

const confirm = z.object({ approved: z.boolean() });

serveStdio(() => {
  const server = new McpServer({ name: "refunds", version: "1.0.0" });
  server.registerTool(
    "refund_order",
    { description: "Refund an order.", inputSchema: { order: z.string(), amount: z.number() } },
    ({ order, amount }, ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, "confirm", confirm);
      if (!answer)
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: `Refund $${amount} on ${order}?`,
              requestedSchema: confirm,
            }),
          },
        });
      console.error(`server: refunded ${order}`);
      return { content: [{ type: "text", text: answer.approved ? `refunded ${order}` : "kept" }] };
    },
  );
  return server;
});
