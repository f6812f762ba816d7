/**
 * `@rein/core/store`: helpers for writing a checkpointer, shared by Rein's own stores so every
 * backend pages, encodes cursors, rebuilds delta chains and reports lost races the same way.
 *
 * @module
 */
export {
  channelValuesFromChains,
  checkFence,
  FINAL_RUN_STATUSES,
  conflictError,
  decodeCursor,
  decodeSeqCursor,
  encodeCursor,
  pageLimit,
  rebuildChannelValue,
  settle,
} from "./checkpoint/store-kit.ts";
export type { ChainLink } from "./checkpoint/store-kit.ts";
export { MAX_THREAD_ID_LENGTH, validateThreadId } from "./ids.ts";
