import { fileURLToPath } from "node:url";
import {
  Client,
  SUPPORTED_PROTOCOL_VERSIONS,
  isInputRequiredResult,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const server = fileURLToPath(new URL("./agents-mcp-graph-server.ts", import.meta.url));
const client = new Client(
  { name: "desk", version: "1.0.0" },
  {
    versionNegotiation: { mode: "auto" },
    supportedProtocolVersions: ["2026-07-28", ...SUPPORTED_PROTOCOL_VERSIONS],
    capabilities: { elicitation: { form: {} } },
    // This client shows the questions itself rather than answering them in a callback.
    inputRequired: { autoFulfill: false },
  },
);
await client.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: ["--import", import.meta.resolve("tsx"), server],
    env: { ...(process.env as Record<string, string>), REFUND_STATE_KEY: "a long random secret" },
  }),
);

const call = { name: "refund_order", arguments: { order: "1042" } };
const asked = await client.callTool(call, { allowInputRequired: true });
if (!isInputRequiredResult(asked)) throw new Error("expected the graph to ask");
// One question per pending interrupt, keyed by the interrupt's id.
const [id, question] = Object.entries(asked.inputRequests ?? {})[0]!;
console.log(asked.resultType, (question.params as { message: string }).message);

// The answer and the signed state go back on the next call: the graph resumes that interrupt.
const retry = {
  ...call,
  inputResponses: { [id]: { action: "accept", content: { approved: true } } },
  requestState: asked.requestState,
};
const done = await client.callTool(retry, { allowInputRequired: true });
console.log(done.content.map((c) => (c.type === "text" ? c.text : "")).join(""));
await client.close();
