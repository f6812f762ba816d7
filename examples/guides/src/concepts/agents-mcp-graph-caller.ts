import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  Client,
  SUPPORTED_PROTOCOL_VERSIONS,
  StreamableHTTPClientTransport,
  isInputRequiredResult,
  type CallToolResult,
  type InputRequiredResult,
} from "@modelcontextprotocol/client";
import {
  McpServer,
  OAuthError,
  OAuthErrorCode,
  bearerAuthChallengeResponse,
  createMcpHandler,
  verifyBearerToken,
  type AuthInfo,
} from "@modelcontextprotocol/server";
import { MemorySaver, START, StateGraph, lastValue } from "@rein/core";
import { registerGraphTool } from "@rein/mcp";
import { z } from "zod";

// Only the finance lead may approve a payout, and never the person who asked for it.
const payouts = new StateGraph({ vendor: lastValue<string>(), outcome: lastValue<string>() })
  .addNode("approve", (s, ctx) => {
    const { approved } = ctx.interrupt(`Pay ${s.vendor}?`, {
      answer: z.object({ approved: z.boolean() }),
      approvers: { subjects: ["lead@example.com", "clerk@example.com"], notRequester: true },
    });
    return { outcome: approved ? `paid ${s.vendor}` : "declined" };
  })
  .addEdge(START, "approve")
  .compile({ checkpointer: new MemorySaver() });

// Stands in for your authorization server: the token's subject goes in `extra.sub`.
const people: Record<string, string> = {
  "clerk-token": "clerk@example.com",
  "lead-token": "lead@example.com",
};
const verifier = {
  verifyAccessToken: (token: string): Promise<AuthInfo> => {
    const sub = people[token];
    if (!sub) return Promise.reject(new OAuthError(OAuthErrorCode.InvalidToken, "unknown token"));
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    return Promise.resolve({ token, clientId: "desk", scopes: [], expiresAt, extra: { sub } });
  },
};

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "payouts", version: "1.0.0" });
  registerGraphTool(server, payouts, {
    name: "pay_vendor",
    inputSchema: z.object({ vendor: z.string() }),
    secret: "a long random secret",
    // The default: the caller is the subject of the token verified below.
  });
  return server;
});
// Verify the bearer token, then hand the request and who sent it to the MCP handler.
const http = createServer((req, res) => {
  const request = new Request(`http://127.0.0.1${req.url}`, {
    method: req.method!,
    headers: req.headers as Record<string, string>,
    ...(req.method === "POST" ? { body: req, duplex: "half" } : {}),
  });
  void verifyBearerToken(request.headers.get("authorization"), { verifier })
    .then((authInfo) => handler.fetch(request, { authInfo }))
    .catch((error: unknown) => bearerAuthChallengeResponse(error))
    .then(async (response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers));
      for await (const chunk of response.body ?? []) res.write(chunk);
      res.end();
    });
});
await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);

async function as(token: string): Promise<Client> {
  const client = new Client(
    { name: "desk", version: "1.0.0" },
    {
      versionNegotiation: { mode: "auto" },
      supportedProtocolVersions: ["2026-07-28", ...SUPPORTED_PROTOCOL_VERSIONS],
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: false },
    },
  );
  const headers = { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}
const text = (r: CallToolResult | InputRequiredResult): string =>
  isInputRequiredResult(r) ? "" : r.content.map((c) => (c.type === "text" ? c.text : "")).join("");

// The clerk asks for the payout: the run is theirs, and it pauses on the policy's question.
const clerk = await as("clerk-token");
const call = { name: "pay_vendor", arguments: { vendor: "Acme" } };
const asked = await clerk.callTool(call, { allowInputRequired: true });
if (!isInputRequiredResult(asked)) throw new Error("expected the payout to wait for approval");
const [id] = Object.keys(asked.inputRequests ?? {});
const yes = {
  ...call,
  inputResponses: { [id!]: { action: "accept", content: { approved: true } } },
  requestState: asked.requestState,
};

// The clerk may not approve their own request; the lead may.
const own = await clerk.callTool(yes, { allowInputRequired: true });
console.log("clerk:", text(own));
const lead = await as("lead-token");
console.log("lead:", text(await lead.callTool(yes, { allowInputRequired: true })));

await Promise.all([clerk.close(), lead.close()]);
http.close();
