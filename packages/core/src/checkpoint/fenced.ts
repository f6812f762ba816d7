/**
 * A view of a store that stamps every write with the writer's lease proof, so runtime code writes
 * through it as through any store and cannot forget the fence on one write.
 */
import type {
  AnswerBatch,
  Checkpointer,
  Fence,
  EveryCapabilityStore,
  RuntimeStore,
  RunRecord,
  StepCommit,
  TaskOutcome,
  ThreadRecord,
} from "./types.ts";
import type { AuditRecord, SteeringRecord } from "../types.ts";
import type { TaskId, ThreadId } from "../ids.ts";
import { requireCapability } from "./capabilities.ts";
import { storeView } from "./view.ts";

type EveryMember = keyof EveryCapabilityStore;

/**
 * The store's writes that take a {@link Fence}: the ones a lease holder makes, which
 * {@link fencedStore} stamps with the holder's proof. The conformance suite runs each with a stale
 * fence and checks it is refused and writes nothing.
 */
export const STORE_WRITE_METHODS = [
  "putThread",
  "commitStep",
  "putTaskOutcome",
  "answerInterrupts",
  "answerBatches",
  "putRequestResult",
  "putOnce",
  "putRun",
  "appendSteering",
  "appendAudit",
] as const satisfies readonly EveryMember[];

/** A write the fencing view stamps. */
export type StoreWriteMethod = (typeof STORE_WRITE_METHODS)[number];

/**
 * Every other method of the store, which the fencing view passes through as it is: reads, and the
 * writes no lease holder makes through a fence (the lease itself, deletes, housekeeping).
 */
export const STORE_UNFENCED_METHODS = [
  "serializer",
  "capabilities",
  "close",
  "getThread",
  "getThreadHead",
  "listThreads",
  "getCheckpoint",
  "listCheckpoints",
  "getChannelValues",
  "getTaskResults",
  "getTaskResultKinds",
  "getInterrupt",
  "getInterrupts",
  "getThreadInterrupts",
  "getPendingInterrupts",
  "getTaskInterrupts",
  "listInterrupts",
  "listExpiredInterrupts",
  "summarizePending",
  "getRequestResult",
  "getOnce",
  "getRun",
  "listRuns",
  "listRunsByStatus",
  "listSteering",
  "listAudit",
  "listAuditChain",
  "verifyAudit",
  "getLease",
  // The outbox's own tables: written by the delivery loop, never by a lease holder.
  "webhooks",
  // API keys: written by admins through the server, never by a lease holder.
  "apiKeys",
  // Writes without a fence: the lease's own calls are what fencing builds on; a delete removes
  // the thread whoever holds it; a ladder step is taken by whichever timer wins its row.
  "acquireLease",
  "acquireLeaseAndRead",
  "renewLease",
  "releaseLease",
  "deleteThread",
  "takeLadderStep",
  // Side records are a feature's, written outside any run: no lease holder writes them.
  "getSideRecord",
  "putSideRecord",
] as const satisfies readonly EveryMember[];

/**
 * Compiles only while every method of {@link Checkpointer} is in one of the two lists: a write
 * added to the interface must be sorted into one, so it cannot go out unfenced unnoticed.
 */
type Unsorted = Exclude<EveryMember, StoreWriteMethod | (typeof STORE_UNFENCED_METHODS)[number]>;
export const EVERY_STORE_METHOD_SORTED: [Unsorted] extends [never] ? true : Unsorted = true;

/**
 * Returns `store` with `fence` attached to every write; reads go straight through.
 *
 * Writes for another thread than the fence's are passed unfenced: a fence proves the lease of one
 * thread only. `onReleased` is called once a write that carried `releaseLease` for the fence's
 * thread was applied: the lease has ended with it.
 */
export function fencedStore<S extends RuntimeStore>(
  store: S,
  fence: Fence,
  onReleased: () => void = () => undefined,
): S {
  const own = (threadId: ThreadId): Fence | undefined =>
    threadId === fence.threadId ? fence : undefined;
  const released = <T>(
    write: { releaseLease?: boolean; fence?: Fence | undefined },
    done: T,
  ): T => {
    if (write.releaseLease && write.fence) onReleased();
    return done;
  };
  const writes = {
    // (The view leaves a capability's writes out for a store without the capability.)
    putThread: (thread: ThreadRecord) =>
      requireCapability(store, "threadCatalog", "putThread").putThread(
        thread,
        own(thread.threadId),
      ),
    commitStep: (commit: StepCommit) => {
      const fenced = { ...commit, fence: own(commit.checkpoint.threadId) };
      return store.commitStep(fenced).then((done) => released(fenced, done));
    },
    putTaskOutcome: (outcome: TaskOutcome) => {
      const fenced = { ...outcome, fence: own(outcome.threadId) };
      return store.putTaskOutcome(fenced).then((done) => released(fenced, done));
    },
    answerInterrupts: (batch: AnswerBatch) =>
      store.answerInterrupts({ ...batch, fence: own(batch.threadId) }),
    // A batch of another thread keeps the fence its caller gave it (a bulk decision holds the
    // lease of every thread it answers in).
    // (The view leaves it out for a store without the capability.)
    answerBatches: (batches: readonly AnswerBatch[]) =>
      requireCapability(store, "bulkAnswers", "a bulk decision").answerBatches(
        batches.map((b) => ({ ...b, fence: own(b.threadId) ?? b.fence })),
      ),
    putRequestResult: (requestId: string, result: unknown) =>
      store.putRequestResult(requestId, result, fence),
    putOnce: (threadId: ThreadId, taskId: TaskId, key: string, value: unknown) =>
      store.putOnce(threadId, taskId, key, value, own(threadId)),
    putRun: (run: RunRecord) => store.putRun(run, own(run.threadId)),
    appendSteering: (record: SteeringRecord) =>
      requireCapability(store, "steering", "steering").appendSteering(record, own(record.threadId)),
    appendAudit: (record: AuditRecord) =>
      requireCapability(store, "auditChain", "an audit line").appendAudit(
        record,
        own(record.threadId),
      ),
  } satisfies Pick<Required<Checkpointer>, StoreWriteMethod>;
  // Every write of STORE_WRITE_METHODS is stamped above; the rest are the store's own.
  return storeView(store, writes);
}
