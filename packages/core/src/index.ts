/**
 * `@rein/core` — a durable graph runtime for LLM agents.
 *
 * Build a graph over typed channels with {@link StateGraph}, compile it with a checkpointer, and
 * run it. A node can stop to ask a person with `ctx.interrupt(payload)`: the run is recorded and
 * returns; any process can answer later with {@link Command.resume} and the node re-runs from its
 * first statement with the answer. Sub-agents are compiled graphs used as nodes; each runs as a
 * child run that can be resumed and steered on its own with `resumeTargeted` and `steer`.
 *
 * @packageDocumentation
 */
export { append, ephemeral, lastValue, reducer } from "./channels.ts";
export type { Channel, ChannelKind, Schema, StateOf, UpdateOf } from "./channels.ts";
export { Command, Send, isCommand, isResumeCommand, isSend } from "./graph/command.ts";
export type {
  CommandInit,
  PendingChildrenPolicy,
  ResumeCommand,
  ResumeOptions,
} from "./graph/command.ts";
export { END, START, StateGraph } from "./api/state-graph.ts";
export type { NodeFn, NodeOptions, NodeReturn, RetryPolicy, Router } from "./graph/node.ts";
export { CompiledGraph } from "./api/compiled.ts";
export { ANONYMOUS_ACTOR, RunConfig } from "./graph/options.ts";
export type { CompileOptions, RunOptions, StreamOptions } from "./graph/options.ts";
export { interrupt } from "./interrupts/interrupt.ts";
export { defineInterrupt } from "./interrupts/define.ts";
export type { InterruptDefinition } from "./interrupts/define.ts";
export type { AnswerInfo, InterruptOptions, NodeContext, TaskContext } from "./graph/node.ts";
export type { StreamEvent } from "./engine/events.ts";
export type { StreamMode } from "./graph/options.ts";
export type { DeterminismMode } from "./graph/definition.ts";
export type {
  InterruptListItem,
  InterruptListPage,
  InterruptListQuery,
} from "./operations/queue.ts";
export type { ResumeTarget } from "./graph/command.ts";
export type { ChildSnapshot, StateSnapshot, TaskSnapshot } from "./operations/state.ts";
export { MemorySaver } from "./checkpoint/memory.ts";
export type { MemorySaverOptions } from "./checkpoint/memory.ts";
export { auditEntryHash } from "./checkpoint/audit-chain.ts";
export type {
  AuditBreak,
  AuditBreakReason,
  AuditChainEntry,
  AuditChainQuery,
  AuditSeal,
  AuditVerification,
  AuditVerifyQuery,
  Checkpointer,
  QueuedRunRequest,
  RunRecord,
  RunRecordOptions,
  RuntimeStore,
  StoreCapabilities,
  StoreCapability,
  StoreCapabilityMap,
  ThreadRecord,
} from "./checkpoint/types.ts";
export type { ApiKeyCapability, ApiKeyRecord, ApiKeyStore } from "./checkpoint/api-keys.ts";
export {
  EVERY_CAPABILITY,
  hasCapability,
  missingCapabilities,
  requireCapability,
} from "./checkpoint/capabilities.ts";
export * from "./errors.ts";
export type { CheckpointId, InterruptId, RunId, TaskId, ThreadId } from "./ids.ts";
export type { LeaseSettings } from "./graph/options.ts";
export { MAX_THREAD_ID_LENGTH, requestRunIdFor, validateThreadId } from "./ids.ts";
export {
  ROOT_STREAM,
  decodeEphemeralThreadId,
  decodeHttpRequestId,
  decodeIdempotencyKey,
  encodeEphemeralThreadId,
  encodeHttpRequestId,
  encodeIdempotencyKey,
} from "./keys.ts";
export type {
  EphemeralThreadIdText,
  HttpRequestIdText,
  HttpRequestRef,
  IdempotencyKeyText,
  IdempotencyRef,
} from "./keys.ts";
export { jsonSerializer } from "./serde.ts";
export type { Serializer } from "./serde.ts";
export type * from "./types.ts";
export { RUN_RESULT_INTERRUPT_LIMIT } from "./types.ts";
export { agent } from "./prebuilt/agent.ts";
export { toolCallContext } from "./prebuilt/decision-context.ts";
export type { ContextMessage, DecisionContext } from "./prebuilt/decision-context.ts";
export type { AgentOptions } from "./prebuilt/agent.ts";
export {
  approvalRequestFor,
  isDeclined,
  modelView,
  partsOf,
  pendingToolCalls,
  textOf,
} from "./prebuilt/messages.ts";
export type {
  ApprovalRequest,
  AssistantMessage,
  ContentPart,
  FilePart,
  ImagePart,
  Message,
  Model,
  ModelCallOptions,
  ModelDelta,
  ModelOutput,
  ProviderToolResult,
  ReasoningPart,
  SteeringMeta,
  TextPart,
  ToolCall,
  ToolMessage,
  ToolReview,
  ToolSpec,
  ToolStatus,
  Usage,
  UserMessage,
} from "./prebuilt/messages.ts";
export { assemble, callModel } from "./prebuilt/model-call.ts";
export type { StandardIssue, StandardResult, StandardSchemaV1 } from "./prebuilt/schema.ts";
export { steeringMessages, steeringPrefix } from "./prebuilt/steering.ts";
export { lastAssistantText, subAgent } from "./prebuilt/sub-agent.ts";
export type { SubAgentOptions } from "./prebuilt/sub-agent.ts";
export {
  messagesChannel,
  tool,
  toolDecisionSchema,
  toolNode,
  toolSpecs,
} from "./prebuilt/tool-node.ts";
export type {
  AnyTool,
  ApprovalPolicy,
  MessagesSchema,
  Tool,
  ToolContext,
  ToolDecision,
  ToolDecisionRequest,
  ToolApproval,
  ToolList,
  ToolNodeOptions,
} from "./prebuilt/tool-node.ts";
export { approversFor } from "./interrupts/approvers.ts";
export { decideInterrupts } from "./operations/bulk.ts";
export { copyThread } from "./operations/copy.ts";
export type { CopyStore, ThreadCopy } from "./operations/copy.ts";
export type { BulkDecided, BulkDecision } from "./operations/bulk.ts";
export type { ApproverCondition, ApproverRule, ApproversSpec } from "./graph/node.ts";
export { payloadDigest } from "./checkpoint/approvals.ts";
export type { NotAllowedRule, StoredApprovalPolicy } from "./checkpoint/approvals.ts";
