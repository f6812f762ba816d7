/**
 * `@rein/mcp` — tools from MCP servers (the Model Context Protocol), behind Rein's approvals.
 *
 * `connectMcp(server, { approve })` connects to a server over stdio or streamable HTTP (on the
 * official `@modelcontextprotocol/client`) and returns its tools as Rein tools for `agent()` or
 * `toolNode()`: the server's JSON Schema checks the model's arguments and a reviewer's edits,
 * calls named by `approve` (names, `*` patterns, or a predicate) pause for a person, results and
 * errors go back to the model, and the list follows the server's `tools/list_changed`. A tool
 * whose server answers `input_required` (or, on a 2025-era server, asks mid-call with
 * `elicitation/create`) pauses as a Rein interrupt and is called again with the person's answer. The other way, `registerGraphTool(server, graph, options)` serves a Rein graph
 * as an MCP tool that answers `input_required` while the graph is paused on a person, with the
 * verified caller as the actor and principal its approval policies check.
 *
 * @packageDocumentation
 */
export { DEFAULT_MCP_TIMEOUT_MS, connectMcp, mcpTools } from "./connect.ts";
export type { LazyMcpTools, McpOptions, McpServer, McpTools } from "./connect.ts";
export { McpToolError } from "./errors.ts";
export type { McpInputAnswer, McpInputRequest } from "./input.ts";
export { principalFromToken, registerGraphTool } from "./serve.ts";
export type { GraphToolOptions } from "./serve.ts";
export { IDEMPOTENCY_META_KEY } from "./meta.ts";
export { approvalTest } from "./tools.ts";
export type { McpApprovalPolicy, McpCall, McpCallSite } from "./tools.ts";
