/**
 * Connecting to an MCP server over stdio (a process this one starts) or streamable HTTP, and
 * keeping its tool list current as the server announces changes.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { AnyTool } from "@rein/core";
import { approvalTest, reinTool, type McpApprovalPolicy } from "./tools.ts";

/** Where the MCP server is. */
export type McpServer =
  /** A process started by this one, spoken to over its stdin and stdout. */
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  /** A server at a URL, over streamable HTTP. */
  | { url: string | URL; headers?: Record<string, string> }
  /** Any transport of the MCP SDK. */
  | { transport: Transport };

/** Options of {@link connectMcp}. */
export interface McpOptions {
  /** Which calls wait for a person: names, `*` patterns (`["delete_*", "send_*"]`) or a predicate. */
  approve?: McpApprovalPolicy;
  /** The client's name the server sees. Default `"rein"`. */
  clientName?: string;
}

/** A connected MCP server: its tools as Rein tools, kept current, and the connection to close. */
export interface McpTools {
  /**
   * The server's tools as Rein tools, as of the last list the server sent. Pass the function
   * itself as `agent({ tools: mcp.tools })` (or `() => [...mine, ...mcp.tools()]`), so a change
   * of the server's list reaches the next model call.
   */
  readonly tools: () => readonly AnyTool[];
  /** Asks the server for its tool list again (done by itself when the server announces one). */
  refresh(): Promise<readonly AnyTool[]>;
  /** The MCP SDK client, for what this package does not wrap (resources, prompts). */
  readonly client: Client;
  /** Closes the connection (and stops a stdio server process). */
  close(): Promise<void>;
}

function transportOf(server: McpServer): Transport {
  if ("transport" in server) return server.transport;
  if ("url" in server)
    return new StreamableHTTPClientTransport(new URL(server.url), {
      ...(server.headers ? { requestInit: { headers: server.headers } } : {}),
    });
  return new StdioClientTransport({
    command: server.command,
    ...(server.args ? { args: server.args } : {}),
    ...(server.env ? { env: server.env } : {}),
    ...(server.cwd ? { cwd: server.cwd } : {}),
    stderr: "inherit",
  });
}

/**
 * Connects to an MCP server and returns its tools as Rein tools: each takes the JSON Schema the
 * server declares (so a reviewer's edit is checked against it before it is stored), waits for a
 * person when `approve` says so, and returns the server's result to the model — an `isError`
 * result or a protocol error becomes an `error` tool message the model reads. When the server
 * announces that its tool list changed, the list is fetched again.
 *
 * @example
 * const mcp = await connectMcp(
 *   { command: "node", args: ["desk-server.js"] },
 *   { approve: ["delete_*", "send_*"] },
 * );
 * const graph = agent({ model, tools: mcp.tools, checkpointer });
 */
export async function connectMcp(server: McpServer, options: McpOptions = {}): Promise<McpTools> {
  const needsApproval = approvalTest(options.approve);
  let current: readonly AnyTool[] = [];
  const client: Client = new Client(
    { name: options.clientName ?? "rein", version: "0.1.0" },
    {
      listChanged: {
        tools: {
          onChanged: (error, tools) => {
            if (!error && tools) current = convert(tools);
          },
        },
      },
    },
  );
  const convert = (tools: readonly McpTool[]): readonly AnyTool[] =>
    Object.freeze(tools.map((t) => reinTool(client, t, needsApproval)));
  const refresh = async (): Promise<readonly AnyTool[]> => {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    current = convert(tools);
    return current;
  };
  await client.connect(transportOf(server));
  await refresh();
  return { tools: () => current, refresh, client, close: () => client.close() };
}

/** An MCP server's tools, reached when the agent first needs them ({@link mcpTools}). */
export interface LazyMcpTools {
  /** The current tools, connecting first if need be: pass it as `agent({ tools })`. */
  readonly tools: () => Promise<readonly AnyTool[]>;
  /** The connection, made now if not yet. */
  connect(): Promise<McpTools>;
  /** Closes the connection if one was made. */
  close(): Promise<void>;
}

/**
 * {@link connectMcp} for a graph built synchronously (a graph module's factory): nothing is
 * started until the first model or tool step asks for the tools, and a failed connection is
 * tried again at the next step (the failure is that step's error).
 *
 * @example
 * const mail = mcpTools({ command: "node", args: ["mail-server.js"] }, { approve: ["send_*"] });
 * const graph = agent({ model, tools: mail.tools, checkpointer });
 */
export function mcpTools(server: McpServer, options: McpOptions = {}): LazyMcpTools {
  let connecting: Promise<McpTools> | undefined;
  const connect = (): Promise<McpTools> => {
    connecting ??= connectMcp(server, options).catch((error: unknown) => {
      connecting = undefined;
      throw error;
    });
    return connecting;
  };
  return {
    tools: async () => (await connect()).tools(),
    connect,
    close: async () => {
      const open = connecting;
      connecting = undefined;
      if (open) await (await open.catch(() => undefined))?.close();
    },
  };
}
