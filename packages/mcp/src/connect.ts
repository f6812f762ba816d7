/**
 * Connecting to an MCP server over stdio (a process this one starts) or streamable HTTP, and
 * keeping its tool list current as the server announces changes.
 */
import {
  Client,
  ProtocolError,
  ProtocolErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
  StreamableHTTPClientTransport,
  type ElicitRequest,
  type ElicitResult,
  type Tool as McpTool,
  type Transport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { AnyTool } from "@rein/core";
import { approvalTest, reinTool, type McpApprovalPolicy } from "./tools.ts";

/** The protocol revision with `input_required` results (multi round-trip requests). */
const MODERN_REVISION = "2026-07-28";

/** The default of {@link McpOptions.requestTimeoutMs}. */
export const DEFAULT_MCP_TIMEOUT_MS = 30_000;

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
  /**
   * How long one request to the server may take before it fails, in milliseconds; a progress
   * notification from the server starts the wait again. Default 30 s (the SDK's own is 60 s).
   * A server whose connection breaks mid-call fails the call at once, whatever this says.
   */
  requestTimeoutMs?: number;
  /**
   * Which protocol revision to speak: `"auto"` (the default) asks the server first and speaks
   * 2026-07-28 when it can (over stdio that starts the server once more, briefly, to ask),
   * `"legacy"` the 2025 handshake only, `{ pin: "2026-07-28" }` that revision or fail.
   */
  protocol?: "auto" | "legacy" | { pin: string };
  /**
   * The most `input_required` rounds one tool call may take (each asks a person, then calls
   * again with the answers). Default 5.
   */
  maxInputRounds?: number;
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
  /**
   * The tools once a refresh the server announced has landed: what a caller that must see the
   * newest list awaits (the lazy {@link mcpTools} does).
   */
  current(): Promise<readonly AnyTool[]>;
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
 * Fails the calls in flight at once when the connection closes or breaks. Called after connect,
 * which installs the protocol's own handlers: it chains onto them.
 */
function failCallsOnBreak(transport: Transport, inFlight: ReadonlySet<AbortController>): void {
  const breakCalls = (why: string) => {
    for (const controller of inFlight) controller.abort(new Error(`The MCP server ${why}.`));
  };
  const onclose = transport.onclose;
  transport.onclose = () => {
    breakCalls("closed the connection");
    onclose?.call(transport);
  };
  const onerror = transport.onerror;
  transport.onerror = (error: Error) => {
    breakCalls(`connection failed (${error.message})`);
    onerror?.call(transport, error);
  };
}

/**
 * Answers a 2025-era server's mid-call questions (`elicitation/create`) through the call they
 * belong to; returns how a call takes them while it is in flight.
 */
function routeElicitations(
  client: Client,
): (asked: (request: ElicitRequest) => Promise<ElicitResult>) => () => void {
  const askers = new Set<(request: ElicitRequest) => Promise<ElicitResult>>();
  client.setRequestHandler("elicitation/create", (request) => {
    const [only, ...others] = askers;
    // The 2025 protocol does not say which call a question is for: only one in flight can be.
    if (!only || others.length > 0)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `Rein answers a question during a tool call when exactly one call is in flight on the connection (${askers.size} are): ask with an input_required result (protocol 2026-07-28) instead.`,
      );
    return only(request);
  });
  return (asked) => {
    askers.add(asked);
    return () => askers.delete(asked);
  };
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
  const timeout = options.requestTimeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
  let current: readonly AnyTool[] = [];
  let refreshing: Promise<void> | undefined;
  // Calls in flight, failed at once when the connection breaks (a server that died mid-call
  // would otherwise hold each until its timeout).
  const inFlight = new Set<AbortController>();
  const client: Client = new Client(
    { name: options.clientName ?? "rein", version: "0.1.0" },
    {
      // Protocol revision 2026-07-28 when the server speaks it (its `input_required` results
      // are what a person answers through Rein), else the 2025 handshake.
      versionNegotiation: { mode: options.protocol ?? "auto" },
      supportedProtocolVersions: [MODERN_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS],
      // Form questions are what a person can answer through a Rein interrupt.
      capabilities: { elicitation: { form: {} } },
      // Rein asks a person itself, durably: an `input_required` result comes back to the tool.
      inputRequired: { autoFulfill: false },
      listChanged: {
        tools: {
          // Fetched at once, not after the SDK's debounce: the tool call that changed the list
          // waits for it (see `settled`), so the next model call already has the new tools.
          autoRefresh: false,
          debounceMs: 0,
          onChanged: () => {
            const run = refresh().then(
              () => undefined,
              () => undefined,
            );
            refreshing = run;
            void run.finally(() => {
              if (refreshing === run) refreshing = undefined;
            });
          },
        },
      },
    },
  );
  const transport = transportOf(server);
  // Over stdio a list-change notification rides ahead of the result that caused it, on the one
  // stream. Over HTTP it comes on the listen stream, another connection, so it may land after
  // the result: a server that can change its list is asked for it again once a call returns.
  const ordered = transport instanceof StdioClientTransport;
  const settled = async (): Promise<void> => {
    if (!ordered && client.getServerCapabilities()?.tools?.listChanged) {
      // The call succeeded whatever the list does; a failed refresh keeps the old list.
      await refresh().catch(() => undefined);
      return;
    }
    await new Promise((resolve) => setImmediate(resolve));
    while (refreshing) await refreshing;
  };
  const call = {
    client,
    timeout,
    onElicit: routeElicitations(client),
    maxRounds: options.maxInputRounds ?? 5,
    settled,
    track: (controller: AbortController) => {
      inFlight.add(controller);
      return () => inFlight.delete(controller);
    },
  };
  const convert = (tools: readonly McpTool[]): readonly AnyTool[] =>
    Object.freeze(tools.map((t) => reinTool(call, t, needsApproval)));
  const refresh = async (): Promise<readonly AnyTool[]> => {
    // Past the SDK's response cache: the point is the server's list as it is now.
    const { tools } = await client.listTools(undefined, { timeout, cacheMode: "refresh" });
    current = convert(tools);
    return current;
  };
  await client.connect(transport);
  failCallsOnBreak(transport, inFlight);
  await refresh();
  return {
    tools: () => current,
    refresh,
    current: async () => {
      await settled();
      return current;
    },
    client,
    close: () => client.close(),
  };
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
    tools: async () => (await connect()).current(),
    connect,
    close: async () => {
      const open = connecting;
      connecting = undefined;
      if (open) await (await open.catch(() => undefined))?.close();
    },
  };
}
