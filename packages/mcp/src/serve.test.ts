import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Client,
  SUPPORTED_PROTOCOL_VERSIONS,
  InMemoryTransport,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type InputRequiredResult,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { McpServer } from "@modelcontextprotocol/server";
import { InvalidInputError, MemorySaver, START, StateGraph, lastValue } from "@rein/core";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { listeningPort } from "./fixtures/http.ts";
import { principalFromToken, registerGraphTool } from "./serve.ts";

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

/** A 2026-07-28 client that answers the questions itself, as a host that asks a person would. */
function modernClient(): Client {
  return new Client(
    { name: "test", version: "1.0.0" },
    {
      versionNegotiation: { mode: "auto" },
      supportedProtocolVersions: ["2026-07-28", ...SUPPORTED_PROTOCOL_VERSIONS],
      capabilities: { elicitation: { form: {} } },
      // The test answers the questions itself, as a host that asks a person would.
      inputRequired: { autoFulfill: false },
    },
  );
}

/** The server process's environment for a database and log named `name`. */
function serverEnv(name: string, key = "test-state-key"): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    APPROVAL_DB: join(dir, `${name}.db`),
    APPROVAL_LOG: join(dir, `${name}.jsonl`),
    APPROVAL_KEY: key,
  };
}

/** Starts the server process over the given database and connects a 2026-07-28 client to it. */
async function connect(name: string, key = "test-state-key"): Promise<Client> {
  const client = modernClient();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "--conditions=@rein/source", server],
    env: serverEnv(name, key),
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

/** Asks for the $900 payout to Acme, or answers its question with `retry`. */
function pay(client: Client, retry: object = {}): Promise<Answer> {
  return client.callTool(
    { name: "pay_vendor", arguments: { vendor: "Acme", amount: 900 }, ...retry },
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

describe("the MCP caller's identity, over HTTP with bearer tokens", () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    child?.kill("SIGTERM");
    child = undefined;
  });

  /** Starts the server on HTTP over the database `name`; resolves its URL. */
  async function httpServer(name: string): Promise<URL> {
    child = spawn(
      process.execPath,
      ["--import", "tsx", "--conditions=@rein/source", server, "--http"],
      { env: serverEnv(name), stdio: ["ignore", "pipe", "inherit"] },
    );
    const port = await listeningPort(child);
    return new URL(`http://127.0.0.1:${port}/mcp`);
  }

  /** A client that calls with `token` as its bearer token. */
  async function as(url: URL, token: string): Promise<Client> {
    const client = modernClient();
    const headers = { authorization: `Bearer ${token}` };
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    open.push(client);
    return client;
  }

  it("an approval policy accepts the approver it names and refuses the requester and anyone else", async () => {
    const url = await httpServer("payout");
    const log = join(dir, "payout.jsonl");
    // The clerk asks: the run is theirs (its requester), and it pauses on the policy's question.
    const clerk = await as(url, "clerk-token");
    const first = asked(await pay(clerk));
    const key = Object.keys(first.inputRequests ?? {})[0]!;
    const yes = {
      inputResponses: { [key]: { action: "accept", content: { approved: true } } },
      requestState: first.requestState,
    };

    // The requester may not approve their own payout (the policy's four eyes).
    const own = await pay(clerk, yes);
    expect(own.isError).toBe(true);
    expect(text(own)).toMatch(/started this run.*not_allowed/);
    // Someone the policy does not name is refused.
    const intern = await as(url, "intern-token");
    const other = await pay(intern, yes);
    expect(other.isError).toBe(true);
    expect(text(other)).toMatch(/Only subject lead@example.com, subject clerk@example.com/);
    expect(refunds(log)).toEqual([]);

    // The finance lead, named by the policy, approves: the payout runs once.
    const lead = await as(url, "lead-token");
    const done = await pay(lead, yes);
    expect(done.isError).toBeFalsy();
    expect(text(done)).toBe("paid $900 to Acme");
    expect(refunds(log)).toEqual([{ vendor: "Acme", approved: true }]);
  }, 60_000); // the server process starts under tsx (seconds on a busy machine)

  it("a call re-made with its idempotency key returns the first call's answer, for that caller only", async () => {
    const url = await httpServer("payout-replay");
    const keyed = { _meta: { "rein.dev/idempotency-key": "call-1" } };
    const clerk = await as(url, "clerk-token");
    const first = asked(await pay(clerk, keyed));
    const threadOf = (answer: InputRequiredResult) =>
      (
        JSON.parse(Buffer.from(answer.requestState!.split(".")[0]!, "base64url").toString()) as {
          thread: string;
        }
      ).thread;
    // The same caller, the same key: the same thread and question, no second run.
    const again = asked(await pay(clerk, keyed));
    expect(again.inputRequests).toEqual(first.inputRequests);
    expect(threadOf(again)).toBe(threadOf(first));
    // Another caller sending the same key gets a run of their own.
    const intern = await as(url, "intern-token");
    expect(threadOf(asked(await pay(intern, keyed)))).not.toBe(threadOf(first));

    // The lead's answer, re-sent as it was (a client that crashed before it heard the result):
    // the same result again, and the payout made once.
    const lead = await as(url, "lead-token");
    const key = Object.keys(first.inputRequests ?? {})[0]!;
    const yes = {
      ...keyed,
      inputResponses: { [key]: { action: "accept", content: { approved: true } } },
      requestState: first.requestState,
    };
    expect(text(await pay(lead, yes))).toBe("paid $900 to Acme");
    expect(text(await pay(lead, yes))).toBe("paid $900 to Acme");
    expect(refunds(join(dir, "payout-replay.jsonl"))).toEqual([{ vendor: "Acme", approved: true }]);
  }, 60_000);

  it("a request without a valid token is refused before any tool runs", async () => {
    const url = await httpServer("payout-anon");
    const raw = await fetch(url, {
      method: "POST",
      headers: { authorization: "Bearer forged-token", "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(raw.status).toBe(401);
    await expect(as(url, "forged-token")).rejects.toThrow();
    expect(refunds(join(dir, "payout-anon.jsonl"))).toEqual([]);
  }, 60_000);
});

describe("the caller over stdio, and the principal option", () => {
  it("without a verified token the caller is anonymous, and a policy refuses its answer", async () => {
    const client = await connect("payout-stdio");
    const first = asked(await pay(client));
    const key = Object.keys(first.inputRequests ?? {})[0]!;
    const refused = await pay(client, {
      inputResponses: { [key]: { action: "accept", content: { approved: true } } },
      requestState: first.requestState,
    });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/names no principal.*not_allowed/);
    expect(refunds(join(dir, "payout-stdio.jsonl"))).toEqual([]);
  }, 60_000);

  it("reads a verified token's subject, groups and roles, and nothing else", () => {
    const base = { token: "t", clientId: "desk-app", scopes: [] };
    expect(principalFromToken(undefined)).toBeUndefined();
    expect(principalFromToken(base)).toEqual({ subject: "desk-app" });
    expect(
      principalFromToken({
        ...base,
        extra: { sub: "lead@example.com", groups: ["finance"], roles: ["approver", 7] },
      }),
    ).toEqual({ subject: "lead@example.com", groups: ["finance"] });
  });

  it("a principal option that returns no valid principal is refused, and nothing runs", async () => {
    let ran = 0;
    const graph = new StateGraph({ order: lastValue<string>() })
      .addNode("work", () => {
        ran++;
        return {};
      })
      .addEdge(START, "work")
      .compile({ checkpointer: new MemorySaver() });
    const server = new McpServer({ name: "refunds", version: "1.0.0" });
    registerGraphTool(server, graph, {
      name: "refund_order",
      inputSchema: z.object({ order: z.string() }),
      secret: "key",
      // A resolver that lost the subject on the way (a claim renamed upstream).
      principal: () => ({ subject: " ", roles: ["finance"] }),
    });
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = modernClient();
    await client.connect(clientSide);
    open.push(client);
    const result = await client.callTool({ name: "refund_order", arguments: { order: "1" } });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/principal option returned no valid principal.*invalid_input/);
    expect(ran).toBe(0);
  });
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
