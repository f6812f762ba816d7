/**
 * `@rein/core/store`: the surface for writing a store. The {@link Checkpointer} interface and its
 * role interfaces, the records that cross it, and the helpers Rein's own stores share so every
 * backend plans answers, pages, encodes cursors, rebuilds delta chains and reports lost races the
 * same way.
 *
 * @module
 */
export {
  chainFromRange,
  chainLengthOfVersion,
  channelValuesFromChains,
  checkFence,
  FINAL_RUN_STATUSES,
  conflictError,
  decodeCursor,
  decodeSeqCursor,
  encodeCursor,
  keysetPage,
  keysetSlice,
  lazyPendingPage,
  LEASE_READ_RUN_LIMIT,
  pageLimit,
  rebuildChannelValue,
  sameHead,
  settle,
} from "./checkpoint/store-kit.ts";
export type { ChainLink } from "./checkpoint/store-kit.ts";
export {
  AUDIT_CHAIN_VERSION,
  auditEntryHash,
  auditRecordId,
  auditSealText,
  auditSealValid,
  decodeChainCursor,
  encodeChainCursor,
  signAuditSeal,
  verifyAuditChains,
} from "./checkpoint/audit-chain.ts";
export type { AuditChainSource } from "./checkpoint/audit-chain.ts";
export { answerTargets, appliedOutcome, planAnswerBatch } from "./checkpoint/answer-plan.ts";
export { storeView } from "./checkpoint/view.ts";
export { toPublicInterrupt } from "./interrupts/records.ts";
export {
  approvalStep,
  approvalView,
  canonicalJson,
  listed,
  payloadDigest,
  refusalText,
  storedPolicy,
} from "./checkpoint/approvals.ts";
export type {
  ApprovalProgress,
  ApprovalStep,
  NotAllowedRule,
  StoredApprovalPolicy,
} from "./checkpoint/approvals.ts";
export type {
  AnswerBatchReads,
  TargetRead,
  AnswerPlan,
  AnswerWrites,
  InterruptResolution,
} from "./checkpoint/answer-plan.ts";
export {
  interruptBody,
  interruptColumns,
  joinInterrupt,
  joinRun,
  joinTaskResult,
  rootGraphOf,
  runBody,
  runColumns,
  taskResultBody,
} from "./checkpoint/columns.ts";
export type {
  EncodedRunRow,
  EncodedTaskResultRow,
  InterruptColumns,
  RunColumns,
} from "./checkpoint/columns.ts";
export { RecordCodec } from "./checkpoint/record-codec.ts";
export type {
  EncodedCheckpointRow,
  EncodedInterruptRow,
  EncodedThreadRow,
} from "./checkpoint/record-codec.ts";
export type * from "./checkpoint/types.ts";
export {
  EVERY_CAPABILITY,
  RUNTIME_STORE_MEMBERS,
  hasCapability,
  missingCapabilities,
  requireCapability,
} from "./checkpoint/capabilities.ts";
export { API_KEY_COLUMNS, apiKeyFromRow, apiKeyValues } from "./checkpoint/api-keys.ts";
export type * from "./checkpoint/api-keys.ts";
export {
  decodeWebhookList,
  encodeWebhookList,
  TIMER_ACTOR,
  WEBHOOK_EVENT_TYPES,
} from "./checkpoint/webhooks.ts";
export type * from "./checkpoint/webhooks.ts";
export {
  attemptFromRow,
  claimFromRows,
  deliveriesFromRows,
  eventFromRow,
  SUBSCRIPTION_COLUMNS,
  subscriptionFromRow,
  subscriptionValues,
} from "./checkpoint/webhook-rows.ts";
export type {
  WebhookAttemptRow,
  WebhookDeliveryRow,
  WebhookEventRow,
  WebhookSubscriptionRow,
} from "./checkpoint/webhook-rows.ts";
export { MAX_THREAD_ID_LENGTH, validateThreadId } from "./ids.ts";
