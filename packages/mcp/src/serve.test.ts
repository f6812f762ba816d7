import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Client,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult,
  type InputRequiredResult,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { McpServer } from "@modelcontextprotocol/server";
import { InvalidInputError, MemorySaver, START, StateGraph, lastValue } from "@rein/core";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { registerGraphTool } from "./serve.ts";

const server = fileURLToPath(new URL("./fixtures/approval-server.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "rein-mcp-serve-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the graph refunded, from the server's own log. */
function refunds(log: string): Record<string, unknown>[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const open: Client[] = [];
/** Each client's server process. */
const pids = new Map<Client, number | null>();
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** Starts the server process over the given database and connects a 2026-07-28 client to it. */
async function connect(name: string, key = "test-state-key"): Promise<Client> {
  const client = new Client(
    { name: "test", version: "1.0.0" },
    {
      versionNegotiation: { mode: "auto" },
      supportedProtocolVersions: ["2026-07-28", ...SUPPORTED_PROTOCOL_VERSIONS],
      capabilities: { elicitation: { form: {} } },
      // The test answers the questions itself, as a host that asks a person would.
      inputRequired: { autoFulfill: false },
    },
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "--conditions=@rein/source", server],
    env: {
      ...(process.env as Record<string, string>),
      APPROVAL_DB: join(dir, `${name}.db`),
      APPROVAL_LOG: join(dir, `${name}.jsonl`),
      APPROVAL_KEY: key,
    },
    stderr: "inherit",
  });
  await client.connect(transport);
  pids.set(client, transport.pid);
  open.push(client);
  return client;
}

type Answer = CallToolResult | InputRequiredResult;

function call(
  client: Client,
  retry: { inputResponses: Record<string, unknown>; requestState?: string } | object = {},
  amount = 25,
): Promise<Answer> {
  return client.callTool(
    { name: "refund_order", arguments: { order: "1042", amount }, ...retry },
    { allowInputRequired: true },
  );
}

function asked(answer: Answer): InputRequiredResult {
  expect(answer.resultType).toBe("input_required");
  return answer as InputRequiredResult;
}

function text(answer: Answer): string {
  const content = (answer as CallToolResult).content;
  return content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

describe("a Rein graph served as an MCP tool", () => {
  it("answers input_required while paused, and the call with the answer resumes it once", async () => {
    const client = await connect("round-trip");
    const first = asked(await call(client));
    const [key, request] = Object.entries(first.inputRequests ?? {})[0] ?? [];
    expect(Object.keys(first.inputRequests ?? {})).toHaveLength(1);
    expect(request).toMatchObject({
      method: "elicitation/create",
      params: {
        mode: "form",
        message: "Refund $25 on order 1042?",
        requestedSchema: {
          type: "object",
          properties: { approved: { type: "boolean" } },
          required: ["approved"],
        },
      },
    });
    expect(first.requestState).toEqual(expect.any(String));
    expect(refunds(join(dir, "round-trip.jsonl"))).toEqual([]);

    const done = await call(client, {
      inputResponses: { [key!]: { action: "accept", content: { approved: true, note: "ok" } } },
      requestState: first.requestState,
    });
    expect(done.isError).toBeFalsy();
    expect(text(done)).toBe("refunded $25 on 1042");
    // The node ran past its question exactly once, with the client's answer.
    expect(refunds(join(dir, "round-trip.jsonl"))).toEqual([
      { order: "1042", approved: true, note: "ok" },
    ]);

    // The same state again: its interrupt is answered, so it is stale; nothing runs.
    const again = await call(client, {
      inputResponses: { [key!]: { action: "accept", content: { approved: true } } },
      requestState: first.requestState,
    });
    expect(again.isError).toBe(true);
    expect(text(again)).toMatch(/stale/);
    expect(refunds(join(dir, "round-trip.jsonl"))).toHaveLength(1);
  }, 60_000); // each server process starts under tsx (seconds on a busy machine)

  it("refuses a forged, re-signed or mis-answered state and changes nothing", async () => {
    const client = await connect("forged");
    const first = asked(await call(client));
    const key = Object.keys(first.inputRequests ?? {})[0]!;
    const yes = { [key]: { action: "accept", content: { approved: true } } };
    const [body, mac] = (first.requestState ?? "").split(".");
    // Another thread's id with the old signature.
    const state = JSON.parse(Buffer.from(body!, "base64url").toString()) as { thread: string };
    const forgedBody = Buffer.from(JSON.stringify({ ...state, thread: "someone-else" })).toString(
      "base64url",
    );
    for (const requestState of [`${forgedBody}.${mac}`, `${body}.AAAA`, "not-a-state"]) {
      const refused = await call(client, { inputResponses: yes, requestState });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/not one this tool issued/);
    }
    // An answer the interrupt's schema rejects is refused before it is stored.
    const invalid = await call(client, {
      inputResponses: { [key]: { action: "accept", content: { approved: "yes" } } },
      requestState: first.requestState,
    });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(/invalid_answer/);
    const declined = await call(client, {
      inputResponses: { [key]: { action: "decline" } },
      requestState: first.requestState,
    });
    expect(declined.isError).toBe(true);
    expect(text(declined)).toMatch(/decline/);
    expect(refunds(join(dir, "forged.jsonl"))).toEqual([]);

    // The genuine state still works after all of that.
    const done = await call(client, { inputResponses: yes, requestState: first.requestState });
    expect(text(done)).toBe("refunded $25 on 1042");
    expect(refunds(join(dir, "forged.jsonl"))).toHaveLength(1);
  }, 60_000); // each server process starts under tsx (seconds on a busy machine)

  it("a server killed between the calls: a restart continues the thread, and a second pause asks again", async () => {
    const before = await connect("restart");
    const first = asked(await call(before, {}, 500));
    const key = Object.keys(first.inputRequests ?? {})[0]!;
    const yes = { [key]: { action: "accept", content: { approved: true } } };
    process.kill(pids.get(before)!, "SIGKILL");

    // A server with another key refuses the state and changes nothing.
    const other = await connect("restart", "another-key");
    const refused = await call(
      other,
      { inputResponses: yes, requestState: first.requestState },
      500,
    );
    expect(refused.isError).toBe(true);
    expect(refunds(join(dir, "restart.jsonl"))).toEqual([]);

    const after = await connect("restart");
    const second = asked(
      await call(after, { inputResponses: yes, requestState: first.requestState }, 500),
    );
    expect(refunds(join(dir, "restart.jsonl"))).toEqual([{ order: "1042", approved: true }]);
    // The manager's question: a boolean answer, asked as a form with one `value` field.
    const [managerKey, request] = Object.entries(second.inputRequests ?? {})[0] ?? [];
    expect(managerKey).not.toBe(key);
    expect(request?.params).toMatchObject({
      message: "Manager: confirm the $500 refund?",
      requestedSchema: { type: "object", properties: { value: { type: "boolean" } } },
    });
    const done = await call(
      after,
      {
        inputResponses: { [managerKey!]: { action: "accept", content: { value: true } } },
        requestState: second.requestState,
      },
      500,
    );
    expect(text(done)).toBe("refunded $500 on 1042, confirmed");
    expect(refunds(join(dir, "restart.jsonl"))).toEqual([
      { order: "1042", approved: true },
      { manager: true },
    ]);
  }, 60_000); // each server process starts under tsx (seconds on a busy machine)
});

describe("registerGraphTool's options", () => {
  it("refuses an empty signing key before the tool is served", () => {
    const graph = new StateGraph({ order: lastValue<string>() })
      .addNode("noop", () => ({}))
      .addEdge(START, "noop")
      .compile({ checkpointer: new MemorySaver() });
    const server = new McpServer({ name: "refunds", version: "1.0.0" });
    const register = () =>
      registerGraphTool(server, graph, {
        name: "refund_order",
        inputSchema: z.object({ order: z.string() }),
        secret: "",
      });
    expect(register).toThrow(InvalidInputError);
    expect(register).toThrow(/non-empty secret/);
  });
});
