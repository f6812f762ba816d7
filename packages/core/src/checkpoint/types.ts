/**
 * The checkpointer interface: everything the runtime persists, and the only thing it talks to.
 *
 * Three backends implement it (MemorySaver here, SqliteSaver, PostgresSaver) and all pass the
 * conformance suite exported from `@rein/core/testing`. Every method that changes several rows does
 * so atomically: a crash leaves either all of it or none of it.
 *
 * Values (channel blobs, writes, payloads, answers) cross this interface as JS values; the store
 * encodes them with its {@link Serializer}.
 */
import type { ApiKeyCapability } from "./api-keys.ts";
import type { CheckpointId, InterruptId, RunId, TaskId, ThreadId } from "../ids.ts";
import type { Serializer } from "../serde.ts";
import type {
  ApprovalPrincipal,
  AuditRecord,
  EscalationTargets,
  Interrupt,
  RunPathEntry,
  RunStatus,
  SteeringRecord,
} from "../types.ts";
import type { ApprovalProgress, NotAllowedRule, StoredApprovalPolicy } from "./approvals.ts";
import type { WebhookStore } from "./webhooks.ts";
import type {
  AuditChainEntry,
  AuditChainQuery,
  AuditQuery,
  AuditVerification,
  AuditVerifyQuery,
} from "./audit-types.ts";

export type {
  AuditBreak,
  AuditBreakReason,
  AuditChainEntry,
  AuditChainQuery,
  AuditQuery,
  AuditSeal,
  AuditVerification,
  AuditVerifyQuery,
} from "./audit-types.ts";
import type { SideRecordStore } from "./side-record-types.ts";

export type { SideRecordStore, SideRecordWrite } from "./side-record-types.ts";

/**
 * Key of one checkpoint stream within a thread: `""` for the root graph, the child run id for a
 * subgraph run. Each stream has its own head.
 */
export type StreamKey = string;

/** A task scheduled for a step. */
export interface TaskSpec {
  id: TaskId;
  node: string;
  /** `"edge"` for a node triggered by edges/goto, `"send:<i>"` for the i-th Send of the step. */
  trigger: string;
  /** The Send argument (the task's input instead of the state), when `trigger` is a send. */
  arg?: unknown;
}

/** Where a checkpoint came from. */
export type CheckpointSource = "input" | "loop" | "update" | "fork";

/** The state of one stream before a step: channel versions and the tasks of the next step. */
export interface CheckpointRecord {
  threadId: ThreadId;
  stream: StreamKey;
  id: CheckpointId;
  parentId: CheckpointId | null;
  runId: RunId;
  /** Step number of the stream; `-1` for the input checkpoint. */
  step: number;
  /** Channel name → version of the value this checkpoint references. */
  versions: Record<string, string>;
  /** Tasks of the next step (empty when the run is finished). */
  next: TaskSpec[];
  source: CheckpointSource;
  createdAt: string;
  /** Free-form metadata (e.g. `{ writes: { node: update } }`, `{ asNode }`). */
  metadata: Record<string, unknown>;
}

/**
 * One stored version of a channel value. A `delta` holds only what was appended since version
 * `prev` (append channels), so bytes per step do not grow with history; a `full` holds the whole
 * value. Reading a version rebuilds it by following `prev` links down to a `full` blob.
 */
export interface ChannelBlob {
  channel: string;
  version: string;
  kind: "full" | "delta";
  prev: string | null;
  /** For `delta`: the array of appended items. For `full`: the value. */
  value: unknown;
}

/** One write of a finished task: `[channel, update]`. */
export type ChannelWrite = [channel: string, value: unknown];

/** What a task left behind in its step before the step committed. */
export type TaskResult =
  | {
      kind: "writes";
      taskId: TaskId;
      node: string;
      writes: ChannelWrite[];
      /** Nodes to run next chosen by `Command({ goto })`. */
      gotos: string[];
      /** Sends chosen by `Command({ goto: [new Send(...)] })`. */
      sends: { node: string; arg: unknown }[];
    }
  | {
      /** The task is paused on at least one pending interrupt and waits for an answer. */
      kind: "paused";
      taskId: TaskId;
      node: string;
    };

/** A ladder step the timer has taken: the latest reminder, or the escalation. */
export type LadderStage = "reminded" | "escalated";

/**
 * An interrupt's escalation ladder, its times fixed when the question was raised (ISO, each after
 * the one before): reminders, then the escalation, then the timeout (`onTimeout`).
 */
export interface StoredLadder {
  remindAt: string[];
  escalateAt: string | null;
  /** Who the escalation lets answer too (widening the policy's lists). */
  escalateTo: EscalationTargets | null;
  /** When `onTimeout` applies (the deadline); `null` without a timeout. */
  timeoutAt: string | null;
}

/**
 * One ladder step as the timer writes it, in one transaction: taken only while the interrupt is
 * pending with its `deadline` still at `at` (so of two racing timers one takes it), moving the
 * deadline to `next`, setting the stage, widening the policy (escalation) and appending the audit
 * line; the SQL stores' triggers (and the memory store) write the webhook event.
 */
export interface LadderStepWrite {
  threadId: ThreadId;
  id: InterruptId;
  /** The step's due time: the row's `deadline` the step is conditional on. */
  at: string;
  /** The next step's time (`null`: none). */
  next: string | null;
  stage: LadderStage;
  /** The widened policy an escalation stores; `undefined` leaves the policy as it is. */
  policy?: StoredApprovalPolicy | null;
  audit: AuditRecord;
}

/** How a pending interrupt is resolved at its deadline. */
export type OnTimeout = { kind: "value"; value: unknown } | { kind: "cancel" };

/** An interrupt as stored: the public record plus what the runtime needs to match and list it. */
export interface StoredInterrupt extends Interrupt {
  /** Stream of the checkpoint the task belongs to. */
  stream: StreamKey;
  /** `"o:<order>"` or `"k:<key>"`: what the id was derived from. */
  slot: string;
  /** Grows when the determinism guard supersedes an earlier question in this slot. */
  revision: number;
  /** Run-tree path, root first. */
  path: RunPathEntry[];
  /** Name of the graph that owns the task. */
  graph: string;
  tenant: string | null;
  /** The answer, once `status` is `answered`. `undefined` answers are stored as `null`. */
  answer?: unknown;
  answeredBy?: string | null;
  answeredAt?: string | null;
  /**
   * ISO time of the timer's next step: the deadline, after which a timer resolves it, or with an
   * escalation {@link StoredInterrupt.ladder} the next step of the ladder (a reminder, the
   * escalation, then the deadline). Each step the timer takes moves it on (`null`: none left).
   */
  deadline?: string | null;
  onTimeout?: OnTimeout | null;
  /** The escalation ladder planned when the question was raised (absent or null: none). */
  ladder?: StoredLadder | null;
  /**
   * The ladder step reached (SQL: the `stage` column): absent or null before the first step.
   * Only the timer's step writes it.
   */
  stage?: LadderStage | null;
  /** JSON Schema of the expected answer, when the node declared one. */
  answerSchema?: unknown;
  /**
   * Who may answer, resolved when the question was raised (SQL: the `policy` column). Absent or
   * null: anyone who may resume.
   */
  policy?: StoredApprovalPolicy | null;
  /**
   * The approvals gathered so far under {@link StoredInterrupt.policy} (SQL: the `approvals`
   * column). Only the answer transaction writes it: re-raising the question keeps it.
   */
  approvals?: ApprovalProgress | null;
}

/**
 * A run accepted for later execution (status `queued`), as the process that accepted it stored
 * it: what any process needs to start it, and how to tell a repeat of the request from another.
 */
export interface QueuedRunRequest {
  /** The state update the run starts with. */
  input: Record<string, unknown>;
  /** The request id the run executes under (its run id derives from it). */
  requestId: string;
  /** What happens to the thread's current run: see the server's multitask policies. */
  multitask: "reject" | "enqueue" | "interrupt" | "rollback";
  /** Plain input to a thread with pending interrupts: refuse (default) or cancel them. */
  onPending?: "error" | "cancel";
  /** With `rollback`: the run whose steps this run discards (it starts from before them). */
  rollbackOf?: RunId | null;
  /** Who asked (the audit actor of the run). */
  actor: string;
}

/** Per-run options stored on a run record. */
export interface RunRecordOptions {
  interruptBefore?: string[];
  interruptAfter?: string[];
  /** Present while the run is `queued`, and kept afterwards for a repeat of its request. */
  queued?: QueuedRunRequest;
}

/** Record of a run: a root invocation or a child (subgraph) run. */
export interface RunRecord {
  runId: RunId;
  threadId: ThreadId;
  parentRunId: RunId | null;
  parentTaskId: TaskId | null;
  graph: string;
  namespace: string[];
  stream: StreamKey;
  status: RunStatus;
  createdAt: string;
  updatedAt: string;
  error?: {
    name: string;
    message: string;
    code?: string;
    node?: string;
    /** Kept for a failed model answer (`model_failed`): the provider's code and retry hints. */
    details?: Record<string, unknown>;
  } | null;
  /**
   * Root runs: who started the run (the actor of its first call), the requester an approval
   * policy's `notRequester` refers to. Absent on rows written before it was recorded.
   */
  requester?: string | null;
  /** Per-run options that must survive a resume in another process (static interrupt selectors). */
  options?: RunRecordOptions | null;
}

/** Record of a thread. */
export interface ThreadRecord {
  threadId: ThreadId;
  tenant: string | null;
  metadata: Record<string, unknown>;
  /**
   * Name of the graph the thread runs, when it was created for a graph by name (the server's
   * `POST /threads`). Absent on a thread a graph created on its first run: its root run names it.
   */
  graph?: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * Proof that a write is made by the current holder of a thread's lease.
 *
 * Each time a thread's lease changes hands its fencing token grows. A write that carries a fence
 * is checked in the same transaction: when the thread's current token differs, the store throws
 * {@link FencedOutError} and writes nothing. So a process that was paused past its lease (GC,
 * VM pause, unreachable database) cannot overwrite what the new holder wrote when it wakes.
 * Writes without a fence (tests, tools, migrations) are not checked.
 */
export interface Fence {
  threadId: ThreadId;
  token: number;
}

/** A lease as stored: who holds it, until when, and its fencing token. */
export interface LeaseRecord {
  owner: string;
  expiresAt: string;
  token: number;
}

/** Filter of {@link RunStore.listRunsByStatus}. Oldest `updatedAt` first. */
export interface RunQuery {
  status: RunStatus;
  /** Only root runs (no parent). */
  rootOnly?: boolean;
  limit?: number;
  cursor?: string | null;
}

/** Atomic commit of one superstep. */
export interface StepCommit {
  checkpoint: CheckpointRecord;
  /**
   * Compare-and-set: the head of `(threadId, stream)` must be this id (`null`: the stream must be
   * empty). A mismatch throws {@link CheckpointConflictError} and writes nothing.
   */
  expectedHeadId: CheckpointId | null;
  /** New channel versions referenced by the checkpoint (unchanged channels are not rewritten). */
  blobs: ChannelBlob[];
  /** Interrupt rows to insert or replace (e.g. `after` interrupts raised at the barrier). */
  interrupts?: StoredInterrupt[];
  /** Run rows to insert or replace with this commit. */
  runs?: RunRecord[];
  /**
   * Task results to record with this commit, as {@link TaskResultStore.putTaskOutcome} would
   * (a task that has a `writes` result keeps it), in the commit's stream.
   */
  taskResults?: { checkpointId: CheckpointId; result: TaskResult }[];
  /** The thread row to create or update with this commit, as {@link ThreadStore.putThread}. */
  thread?: ThreadRecord;
  /** Audit lines to append with this commit, in order. */
  audit?: AuditRecord[];
  /**
   * With a fence: ends the lease that fence proves (it expires now; its token stays, so the next
   * holder's is larger) in the same transaction, when the write is applied. The last write of a
   * call carries it, so releasing the thread costs no write of its own.
   */
  releaseLease?: boolean;
  /** Lease proof of the writer; checked in the commit's transaction. */
  fence?: Fence | undefined;
}

/** Atomic record of one task's outcome within an uncommitted step. */
export interface TaskOutcome {
  threadId: ThreadId;
  stream: StreamKey;
  checkpointId: CheckpointId;
  result: TaskResult;
  /** Interrupt rows raised by this execution (inserted, or replaced when the id exists). */
  interrupts: StoredInterrupt[];
  /**
   * Ids to mark `superseded` (the determinism guard saw a different question), whether they are
   * pending or answered: an answer to an old question must never be applied to a new one.
   */
  superseded: InterruptId[];
  /**
   * Run rows to store with the outcome, in the same transaction, when the outcome is applied (a
   * task that already has a `writes` result ignores the outcome and these rows too): a paused
   * step records its run as `interrupted` together with the pause, not in a write of its own.
   */
  runs?: RunRecord[];
  /**
   * With a fence: ends the lease that fence proves (it expires now; its token stays, so the next
   * holder's is larger) in the same transaction, whether or not the outcome was ignored. The last
   * write of a call carries it, so releasing the thread costs no write of its own.
   */
  releaseLease?: boolean;
  /**
   * Optional read after the outcome: the thread's oldest this-many pending interrupts and their
   * count, as {@link NarrowReadStore.getPendingInterrupts} would return them right after it (the
   * run result of the pause that ends a run). A store may ignore it (and return nothing).
   */
  thenReadPending?: number | undefined;
  /** Lease proof of the writer; checked in the same transaction. */
  fence?: Fence | undefined;
}

/** One answer in an {@link AnswerBatch}. */
export interface InterruptAnswer {
  id: InterruptId;
  value: unknown;
}

/** A task whose `paused` marker an answer clears so the task runs again. */
export interface TaskRef {
  stream: StreamKey;
  checkpointId: CheckpointId;
  taskId: TaskId;
}

/** Atomic application of answers (and cancellations) to pending interrupts. */
export interface AnswerBatch {
  threadId: ThreadId;
  answers: InterruptAnswer[];
  /** Interrupts to move from `pending` to `cancelled` in the same transaction. */
  cancel?: InterruptId[];
  /** Tasks that become runnable: their `paused` results are deleted. */
  wake: TaskRef[];
  actor: string;
  /** `answer` (a person), `timeout` (the deadline timer) or `cancel`. */
  action: "answer" | "timeout" | "cancel";
  /**
   * Who answers, checked against each targeted interrupt's approval policy inside the
   * transaction (only for `action: "answer"`). Without one, an interrupt with a policy refuses
   * the batch (`no_principal`).
   */
  principal?: ApprovalPrincipal | null;
  /**
   * Ids the caller read with an approval policy. A store that plans from the caller's reads
   * ({@link AnswerBatch.readRuns}) reads those rows itself; any other id is assumed to have none,
   * which its in-transaction checks confirm.
   */
  governed?: readonly InterruptId[];
  /** Deduplication id: a batch with a request id already applied is refused with `duplicate`. */
  requestId?: string | null;
  /** When set, the head of this stream must be this checkpoint. */
  expectedHead?: { stream: StreamKey; checkpointId: CheckpointId } | null;
  /**
   * Runs the answers resume: each one still `interrupted` moves to `running` (updated at the
   * answer's time) in the same transaction, so a crash between the answer and its continuation
   * leaves a run the next call or the recovery sweep continues. A status change the store makes
   * itself: the caller need not read the rows first.
   */
  resumeRuns?: RunId[];
  /**
   * The run of each targeted interrupt, as the caller read it while the interrupt was pending. A
   * store may plan from this instead of reading the rows first (one round trip less on a
   * networked store); its in-transaction checks still refuse the batch if anything changed.
   */
  readRuns?: Partial<Record<InterruptId, RunId>>;
  /**
   * The continuation's first reads, made after the answer in its round trip when it applies (a
   * store may ignore this: the caller reads them itself when the outcome carries none).
   */
  thenRead?: ContinuationAsk | undefined;
  /** Lease proof of the writer; checked in the same transaction. */
  fence?: Fence | undefined;
}

/**
 * What a continuation of the root stream at `head` reads first (see {@link AnswerBatch.thenRead}):
 * the head again (with `head` as the known checkpoint), the values `head` references, the kinds
 * of its step's recorded results and, when `taskIds` is given, those tasks' interrupt rows.
 */
export interface ContinuationAsk {
  head: CheckpointRecord;
  taskIds?: readonly TaskId[] | undefined;
}

/** The reads of a {@link ContinuationAsk}, as the store's own read methods would return them. */
export interface ContinuationReadResults {
  /** As {@link ThreadStore.getThreadHead} with the asked head as `known`. */
  head: ThreadHead;
  /** As {@link CheckpointStore.getChannelValues} of the asked head's versions. */
  values: Record<string, unknown>;
  /** As {@link NarrowReadStore.getTaskResultKinds} at the asked head. */
  kinds: TaskResultKind[];
  /** As {@link NarrowReadStore.getTaskInterrupts} of the asked task ids; absent when none were asked. */
  taskInterrupts?: StoredInterrupt[] | undefined;
}

/**
 * What a call reads first, which a networked store may read in the round trip that takes the
 * thread's lease, right after taking it (see {@link LeaseReadStore.acquireLeaseAndRead}). The root
 * stream's head is always read; the rest when asked.
 */
export interface LeaseReads {
  /** A root head the caller holds, as {@link ThreadStore.getThreadHead}'s `known`. */
  known?: CheckpointRecord | undefined;
  /** A request id whose stored outcome to read, as {@link IdempotencyStore.getRequestResult}. */
  requestId?: string | undefined;
  /** How many of the oldest pending interrupts to read, as {@link NarrowReadStore.getPendingInterrupts}. */
  pendingLimit?: number | undefined;
  /** Interrupts to read by id, as {@link InterruptStore.getInterrupts}. */
  interruptIds?: readonly InterruptId[] | undefined;
  /** A run to read (as {@link RunStore.getRun}) with its pending interrupts, newest first. */
  runId?: RunId | undefined;
}

/** The reads of a {@link LeaseReads}, each as the store's own read method would return it. */
export interface LeaseReadResults {
  head: ThreadHead;
  /** Present when a request id was asked: its outcome, `undefined` when it was never applied. */
  request?: { result: unknown } | undefined;
  pending?: PendingPage | undefined;
  interrupts?: StoredInterrupt[] | undefined;
  run?: RunRecord | undefined;
  /**
   * The asked run's pending interrupts (any thread's rows are left out: only this thread's),
   * newest first, at most `LEASE_READ_RUN_LIMIT` (`@rein/core/store`).
   */
  runPending?: StoredInterrupt[] | undefined;
}

/** Result of {@link InterruptStore.answerInterrupts}. Nothing is written unless `ok`. */
export type AnswerOutcome =
  /** Applied; `reads` are the batch's {@link AnswerBatch.thenRead}, when the store made them. */
  | {
      ok: true;
      reads?: ContinuationReadResults | undefined;
      /** Ids that only gained an approval (their policy needs more); they stay pending. */
      recorded?: InterruptId[] | undefined;
    }
  /** Some targeted interrupts were no longer pending (another caller won, or they were resolved). */
  | { ok: false; reason: "not_pending"; ids: InterruptId[] }
  /** The head moved (`expectedHead` did not match). */
  | { ok: false; reason: "head_moved"; headCheckpointId: CheckpointId | null }
  /** The request id was applied before; `result` is what was stored for it (if anything). */
  | { ok: false; reason: "duplicate"; result: unknown }
  /** An interrupt's approval policy does not let the batch's principal answer it. */
  | {
      ok: false;
      reason: "not_allowed";
      interruptId: InterruptId;
      rule: NotAllowedRule;
      policy: StoredApprovalPolicy;
    };

/** Filter of {@link InterruptStore.listInterrupts}. Results are newest first. */
export interface InterruptQuery {
  status?: Interrupt["status"];
  threadId?: ThreadId;
  /**
   * The app: the root graph of the interrupt's run tree (the graph its thread runs). Filtering by
   * the app lists every question of its tree, the sub-agents' included.
   */
  graph?: string;
  /**
   * The graph of the run that asked: a sub-agent's own graph (`refund_agent`), or the root graph
   * for a question the root run asks itself.
   */
  subAgentGraph?: string;
  /** Only this tenant's interrupts (`null`: threads without a tenant). Omitted: all tenants. */
  tenant?: string | null;
  runId?: RunId;
  /** Opaque cursor from a previous page. */
  cursor?: string | null;
  limit?: number;
  /** Also count every interrupt the filters match, on all pages (the page's `total`). */
  count?: boolean;
}

/** One page of interrupts. */
export interface InterruptPage {
  items: StoredInterrupt[];
  nextCursor: string | null;
  /**
   * How many interrupts the filters match across all pages (the cursor aside), counted from the
   * same index as the page. Present when the query asked for `count`.
   */
  total?: number;
}

/** The oldest pending interrupts of a thread and how many are pending in all. */
export interface PendingPage {
  /** At most the `limit` asked for, oldest first (as {@link InterruptStore.getThreadInterrupts}). */
  items: StoredInterrupt[];
  /** How many of the thread's interrupts (all streams) are pending, `items` included. */
  total: number;
}

/** Whether a task of an uncommitted step has a result, and of which kind, without its body. */
export interface TaskResultKind {
  taskId: TaskId;
  kind: TaskResult["kind"];
}

/**
 * The results of an uncommitted step told in short, for a caller that runs only a few of its
 * tasks (see {@link NarrowReadStore.getTaskResultKinds}'s `focus`): the kinds of those tasks'
 * results and counts over the whole step, so a read after one answer among 1,000 paused tasks
 * returns one row, not 1,000.
 */
export interface StepKinds {
  /** The kinds of the focus tasks' results (a focus task without a result is left out). */
  focus: TaskResultKind[];
  /** How many results the step has, the focus tasks' included. */
  recorded: number;
  /** Whether any result of the step is `paused`. */
  paused: boolean;
}

/** What a call on a thread reads first, fetched together by {@link ThreadStore.getThreadHead}. */
export interface ThreadHead {
  /** The head checkpoint of the stream, if it has one. */
  checkpoint: CheckpointRecord | undefined;
  /** The run of that checkpoint. */
  run: RunRecord | undefined;
  /** The thread row, if the thread was created. */
  thread: ThreadRecord | undefined;
  /** How many of the thread's interrupts (all streams) are pending. */
  pendingInterrupts: number;
  /** The thread's steering records, oldest first (as {@link SteeringStore.listSteering}). */
  steering: SteeringRecord[];
}

/** Threads: the row a thread's tenant and metadata live in. */
export interface ThreadStore {
  /**
   * The stream's head checkpoint, its run, the thread row, the count of pending interrupts and
   * the steering log, in one read (one round trip), none of it decoded beyond what is returned.
   *
   * `known` is a checkpoint the caller already holds: when it is still the head (same id), the
   * store returns `known` itself as `checkpoint` instead of reading and decoding it again. A
   * committed checkpoint never changes, so only its id needs checking — this is what keeps
   * answering one of 1,000 paused tasks from decoding the step's whole task list every time.
   */
  getThreadHead(
    threadId: ThreadId,
    stream: StreamKey,
    known?: CheckpointRecord,
  ): Promise<ThreadHead>;
}

/**
 * Capability `threadCatalog`: thread rows on their own — creating, reading, listing and deleting
 * threads, what an API over many threads serves. The runtime writes a thread's row with the
 * commit that starts its first run ({@link StepCommit.thread}) and reads it with the head
 * ({@link ThreadStore.getThreadHead}); it never lists or deletes a thread.
 */
export interface ThreadCatalogStore {
  /** Creates the thread, or updates tenant, metadata, graph and `updatedAt` of an existing one. */
  putThread(thread: ThreadRecord, fence?: Fence): Promise<void>;
  /** The thread record, if the thread was created. */
  getThread(threadId: ThreadId): Promise<ThreadRecord | undefined>;
  /** Threads newest first (by `createdAt`, then id), optionally of one tenant; keyset pages. */
  listThreads(query: { tenant?: string | null; limit?: number; cursor?: string | null }): Promise<{
    items: ThreadRecord[];
    nextCursor: string | null;
  }>;
  /**
   * Deletes the thread and everything stored under it (also its audit lines and request ids), at
   * once. The lease row stays, expired: its fencing token must keep growing if the thread is made
   * again.
   */
  deleteThread(threadId: ThreadId): Promise<void>;
}

/** Checkpoints and the channel values they reference. */
export interface CheckpointStore {
  /**
   * Commits one step atomically: the checkpoint, its blobs and everything else the commit carries,
   * with compare-and-set on the stream head, in one transaction.
   *
   * @throws {CheckpointConflictError} when the head is not `expectedHeadId` (or the id exists);
   *   nothing is written.
   * @throws {FencedOutError} when the fence is stale; nothing is written.
   * @throws {NonSerializableError} when a value cannot be encoded; nothing is written.
   */
  commitStep(commit: StepCommit): Promise<void>;
  /** The checkpoint `id` of the stream, or the stream head when `id` is omitted. */
  getCheckpoint(
    threadId: ThreadId,
    stream: StreamKey,
    id?: CheckpointId,
  ): Promise<CheckpointRecord | undefined>;
  /**
   * Values of the given channel versions, with delta chains rebuilt into full values.
   *
   * @throws {NotFoundError} when a version, or a link of its chain, was never stored.
   */
  getChannelValues(
    threadId: ThreadId,
    stream: StreamKey,
    versions: Record<string, string>,
  ): Promise<Record<string, unknown>>;
}

/** What the tasks of an uncommitted step left behind. */
export interface TaskResultStore {
  /**
   * Records a task's outcome (its writes, or that it paused) with its interrupt rows, atomically.
   * Idempotent: once a task has a `writes` result, later outcomes for it are ignored. Returns
   * the pending page of {@link TaskOutcome.thenReadPending} when the store read it.
   */
  putTaskOutcome(outcome: TaskOutcome): Promise<PendingPage | void>;
  /** Results of the tasks of the step that starts at `checkpointId`, in the order first stored. */
  getTaskResults(
    threadId: ThreadId,
    stream: StreamKey,
    checkpointId: CheckpointId,
  ): Promise<TaskResult[]>;
}

/** Interrupts: the questions paused tasks wait on, and their answers. */
export interface InterruptStore {
  /**
   * The interrupts of `ids` (any thread, any status); ids never stored are left out. Order is
   * unspecified. Reads only those rows, however many the thread holds.
   */
  getInterrupts(ids: readonly InterruptId[]): Promise<StoredInterrupt[]>;
  /** Interrupts of a thread (all streams), oldest first, optionally by status. */
  getThreadInterrupts(threadId: ThreadId, status?: Interrupt["status"]): Promise<StoredInterrupt[]>;
  /**
   * Answers and cancels pending interrupts atomically: all targeted interrupts must be pending
   * (else nothing is written), the listed tasks are woken, one audit record per interrupt is
   * appended with the actor, and the request id is remembered. Planned by `planAnswerBatch`
   * (`@rein/core/store`), which says how repeated ids and refusals are decided; reads and writes
   * only the targeted rows, whatever else the thread holds.
   */
  answerInterrupts(batch: AnswerBatch): Promise<AnswerOutcome>;
}

/**
 * Capability `narrowReads`: reads that decode only what a call needs, from indexes of their own.
 * The runtime needs none of them: without the capability it reads a thread's interrupts
 * ({@link InterruptStore.getThreadInterrupts}) and a step's results
 * ({@link TaskResultStore.getTaskResults}) whole and picks from them, which stays correct but
 * costs more as a thread's rows grow (a wide step mostly waiting on answers).
 */
export interface NarrowReadStore {
  /**
   * The oldest `limit` pending interrupts of a thread (all streams, oldest first, as
   * {@link InterruptStore.getThreadInterrupts}) and the count of all its pending ones, in one
   * read: only the page is decoded, whatever the count.
   */
  getPendingInterrupts(threadId: ThreadId, limit: number): Promise<PendingPage>;
  /**
   * Interrupts of the given tasks of a thread (all statuses, all checkpoints), oldest first,
   * from an index by task: what the tasks a continuation runs match their `interrupt()` calls
   * against, without reading their paused siblings' rows.
   */
  getTaskInterrupts(threadId: ThreadId, taskIds: readonly TaskId[]): Promise<StoredInterrupt[]>;
  /**
   * The kind of each result of the step that starts at `checkpointId`, in the order first
   * stored, without decoding any body: what a continuation needs to tell finished, paused and
   * unstarted tasks apart when most of a wide step waits on answers.
   */
  getTaskResultKinds(
    threadId: ThreadId,
    stream: StreamKey,
    checkpointId: CheckpointId,
  ): Promise<TaskResultKind[]>;
  /**
   * As above, for a caller that will look only at the results of `focus` (the tasks an answer
   * woke): a store may answer with a {@link StepKinds} summary instead of every result, which
   * costs the same however many other tasks of the step wait. Returning the full list is
   * always correct.
   */
  getTaskResultKinds(
    threadId: ThreadId,
    stream: StreamKey,
    checkpointId: CheckpointId,
    focus: readonly TaskId[],
  ): Promise<TaskResultKind[] | StepKinds>;
}

/**
 * Capability `leaseReads`: taking a lease and a call's first reads in one round trip, what a
 * networked store offers to save the round trips a call would spend reading before its first
 * write. Without it the runtime takes the lease ({@link LeaseStore.acquireLease}) and reads after.
 */
export interface LeaseReadStore {
  /**
   * {@link LeaseStore.acquireLease}, and when it is taken, the call's first reads in the same
   * round trip, made after the lease is taken (so they see every write an earlier holder made).
   * `null` when another owner holds an unexpired lease.
   */
  acquireLeaseAndRead(
    threadId: ThreadId,
    owner: string,
    ttlMs: number,
    reads: LeaseReads,
  ): Promise<{ token: number; reads: LeaseReadResults } | null>;
}

/** Capability `escalationLadder`: the deadline timer's steps of an interrupt's ladder. */
export interface EscalationLadderStore {
  /**
   * Takes one escalation-ladder step (see {@link LadderStepWrite}) atomically, only when the
   * interrupt is still pending with `deadline = step.at`.
   *
   * @returns whether this call took it (`false`: another timer did, or it was answered).
   */
  takeLadderStep(step: LadderStepWrite): Promise<boolean>;
}

/** Capability `bulkAnswers`: one decision over many threads, all or nothing. */
export interface BulkAnswerStore {
  /**
   * Applies several batches (of different threads) all-or-nothing, in one transaction: each is
   * checked and planned as {@link InterruptStore.answerInterrupts} would, and when any is refused
   * nothing of any is written. A store without the capability is driven batch by batch (not
   * atomically).
   */
  answerBatches(batches: readonly AnswerBatch[]): Promise<BatchesOutcome>;
}

/** Capability `pendingSummaries`: what a metrics scrape reads of the pending approvals. */
export interface PendingSummaryStore {
  /**
   * The pending interrupts across threads, grouped by tenant and root graph, with each group's
   * count and oldest `createdAt`, in one read of an index over pending rows. A store without the
   * capability reports no pending approvals to metrics.
   */
  summarizePending(): Promise<PendingSummary[]>;
}

/** Pending interrupts of one tenant and root graph (see {@link PendingSummaryStore.summarizePending}). */
export interface PendingSummary {
  /** The tenant of the interrupts' threads; `null` for threads without a tenant. */
  tenant: string | null;
  /** The root graph of the interrupts' run tree: the app. */
  rootGraph: string;
  /** How many are pending. */
  count: number;
  /** The oldest one's `createdAt` (ISO). */
  oldestCreatedAt: string;
}

/** Result of {@link BulkAnswerStore.answerBatches}. Nothing is written unless `ok`. */
export type BatchesOutcome =
  | { ok: true; outcomes: Extract<AnswerOutcome, { ok: true }>[] }
  /** The batch at `index` was refused (the first one found), so none was applied. */
  | { ok: false; index: number; outcome: Exclude<AnswerOutcome, { ok: true }> };

/** Results that make a retried call or a re-run node idempotent: request ids and `ctx.once`. */
export interface IdempotencyStore {
  /** Stores the outcome of a request id recorded by {@link InterruptStore.answerInterrupts}. */
  putRequestResult(requestId: string, result: unknown, fence?: Fence): Promise<void>;
  /**
   * Whether a request id was applied, and the outcome stored for it (`result` is `undefined` while
   * none is stored yet). `undefined` when the id was never applied.
   */
  getRequestResult(requestId: string): Promise<{ result: unknown } | undefined>;
  /** The stored result of `ctx.once(key)` for a task, if it ran. */
  getOnce(threadId: ThreadId, taskId: TaskId, key: string): Promise<{ value: unknown } | undefined>;
  /** Stores a once-result; the first write wins and the stored value is returned. */
  putOnce(
    threadId: ThreadId,
    taskId: TaskId,
    key: string,
    value: unknown,
    fence?: Fence,
  ): Promise<{ value: unknown }>;
}

/** Runs: root invocations and child (subgraph) runs. */
export interface RunStore {
  /** Inserts or replaces a run; a `done` or `cancelled` run keeps its status. */
  putRun(run: RunRecord, fence?: Fence): Promise<void>;
  /** One run by id. */
  getRun(runId: RunId): Promise<RunRecord | undefined>;
}

/**
 * Capability `auditChain`: the audit trail as its own record — appending a line on its own,
 * reading the trail back, its hash chain, and verifying it. The runtime appends its audit lines
 * inside its own transactions ({@link StepCommit.audit}, the answers of
 * {@link InterruptStore.answerInterrupts}); a store without the capability keeps no trail anyone
 * reads, and features that append on their own (steering) skip the line.
 */
export interface AuditChainStore {
  /** Appends an audit record. */
  appendAudit(record: AuditRecord, fence?: Fence): Promise<void>;
  /** Audit records oldest first, by thread or by the tenant of their thread; sequence cursors. */
  listAudit(query: AuditQuery): Promise<{ items: AuditRecord[]; nextCursor: string | null }>;
  /**
   * Audit lines as stored, with their chain links, by thread (thread id order) then append order;
   * keyset cursors. What an export writes and what {@link AuditChainStore.verifyAudit} re-computes.
   */
  listAuditChain(
    query: AuditChainQuery,
  ): Promise<{ items: AuditChainEntry[]; nextCursor: string | null }>;
  /**
   * Re-computes the hash chain of every thread in scope and reports the first broken link; with a
   * key, also checks each chain's signed head and seals the heads of intact chains anew.
   */
  verifyAudit(query: AuditVerifyQuery): Promise<AuditVerification>;
}

/** Thread leases: one writer per thread, with fencing tokens. */
export interface LeaseStore {
  /**
   * Takes the thread's lease for `ttlMs` if it is free, expired, or already `owner`'s, and returns
   * its fencing token: larger than every token handed out before for this thread (also across a
   * release). Returns `null` when another owner holds an unexpired lease.
   */
  acquireLease(threadId: ThreadId, owner: string, ttlMs: number): Promise<number | null>;
  /** Extends `owner`'s unexpired lease; false once it expired or changed hands. */
  renewLease(threadId: ThreadId, owner: string, ttlMs: number): Promise<boolean>;
  /** Releases `owner`'s lease (no-op if someone else holds it); the token is kept for the next holder to exceed. */
  releaseLease(threadId: ThreadId, owner: string): Promise<void>;
}

/**
 * Capability `interruptQueue`: the inbox — interrupts across threads, by filter, and one by id.
 * The runtime reads a thread's interrupts through {@link InterruptStore}; without this capability
 * a run's own rows are found among its thread's.
 */
export interface InterruptQueueStore {
  /** One interrupt by id. */
  getInterrupt(id: InterruptId): Promise<StoredInterrupt | undefined>;
  /** Interrupts across threads, newest first (`createdAt`, then id), one keyset page from an index. */
  listInterrupts(query: InterruptQuery): Promise<InterruptPage>;
}

/**
 * Capability `deadlineTimer`: what the deadline timer polls. The runtime resolves an expired
 * interrupt through {@link InterruptStore.answerInterrupts} like any answer.
 */
export interface DeadlineTimerStore {
  /**
   * Pending interrupts whose deadline (the timer's next step: a ladder step or the deadline) is
   * at or before `now`, oldest deadline first.
   */
  listExpiredInterrupts(now: string, limit: number): Promise<StoredInterrupt[]>;
}

/** Capability `runRecovery`: what the recovery sweep after a crash reads. */
export interface RunRecoveryStore {
  /**
   * Runs in one status across threads, least recently updated first, one keyset page from an
   * index: the recovery sweep finds runs a crashed process left `running` with it.
   */
  listRunsByStatus(query: RunQuery): Promise<{ items: RunRecord[]; nextCursor: string | null }>;
}

/**
 * Capability `threadHistory`: a thread's past — its checkpoints and all its runs — what state
 * history, subgraph state and the run listings read. Running, pausing and resuming read heads and
 * single runs only.
 */
export interface ThreadHistoryStore {
  /** Checkpoints of a stream, newest first, optionally only those with an id below `before`. */
  listCheckpoints(
    threadId: ThreadId,
    stream: StreamKey,
    options?: { limit?: number; before?: CheckpointId },
  ): Promise<CheckpointRecord[]>;
  /** Runs of a thread, oldest first. */
  listRuns(threadId: ThreadId): Promise<RunRecord[]>;
}

/**
 * Capability `steering`: messages sent to a running thread. Without it a thread has no steering
 * log ({@link ThreadHead.steering} is empty).
 */
export interface SteeringStore {
  /** Appends a steering record to its thread's log. */
  appendSteering(record: SteeringRecord, fence?: Fence): Promise<void>;
  /** Steering records of a thread, oldest first. */
  listSteering(threadId: ThreadId): Promise<SteeringRecord[]>;
}

/** Capability `leaseStatus`: who holds a thread's lease, for status views and busy errors. */
export interface LeaseStatusStore {
  /** The current lease holder, if unexpired. */
  getLease(threadId: ThreadId): Promise<LeaseRecord | undefined>;
}

/**
 * Capability `webhookOutbox`: the store keeps a webhook outbox (subscriptions, the events its
 * writes report inside their own transactions, deliveries). A server's webhooks and every
 * notifier fed by them need it.
 */
export interface WebhookOutboxStore {
  /** The store's webhook tables. */
  readonly webhooks: WebhookStore;
}

/**
 * Every capability a store may offer beyond the runtime, by name, with the members a store that
 * declares it implements. A feature names the capabilities it needs; a store lists the ones it
 * has in {@link RuntimeStore.capabilities}.
 */
export interface StoreCapabilityMap {
  threadCatalog: ThreadCatalogStore;
  threadHistory: ThreadHistoryStore;
  interruptQueue: InterruptQueueStore;
  deadlineTimer: DeadlineTimerStore;
  runRecovery: RunRecoveryStore;
  steering: SteeringStore;
  leaseStatus: LeaseStatusStore;
  sideRecords: SideRecordStore;
  auditChain: AuditChainStore;
  escalationLadder: EscalationLadderStore;
  narrowReads: NarrowReadStore;
  leaseReads: LeaseReadStore;
  bulkAnswers: BulkAnswerStore;
  pendingSummaries: PendingSummaryStore;
  webhookOutbox: WebhookOutboxStore;
  apiKeys: ApiKeyCapability;
}

/** The name of one capability. */
export type StoreCapability = keyof StoreCapabilityMap;

/**
 * Capabilities a store offers only where they pay, outside {@link Checkpointer}: `leaseReads`
 * saves round trips of a networked store (Postgres declares it; the memory and SQLite stores,
 * whose reads cost no round trip, do not).
 */
export type OptionalStoreCapability = "leaseReads";

/** The capabilities every one of Rein's shipped stores offers: those of {@link Checkpointer}. */
export type CheckpointerCapability = Exclude<StoreCapability, OptionalStoreCapability>;

/**
 * What a store declares it offers beyond the runtime: `true` for each capability whose members
 * it implements (and whose conformance spec it runs). Absent means absent: features check this
 * record, never whether a method happens to exist.
 */
export type StoreCapabilities = { readonly [K in StoreCapability]?: true };

/**
 * The runtime store: what the engine calls to run, pause and resume graphs — a thread's head,
 * checkpoints, task results, a thread's interrupts and their answers, run rows, request results, `ctx.once` results and leases. A store that implements this (and passes the runtime
 * conformance suite, `runRuntimeStoreConformance`) runs every graph; capabilities
 * ({@link StoreCapabilityMap}) add what features beyond the runtime read and write.
 *
 * Every write takes an optional {@link Fence}: when given, the store checks in the write's own
 * transaction that the thread's lease still carries that token, and throws
 * {@link FencedOutError} without writing anything otherwise. Two rules hold for every writer,
 * fenced or not: an interrupt that is no longer `pending` is never set back to `pending` (nor its
 * answer erased), and a run that is `done` or `cancelled` never changes status again.
 *
 * The method contracts are written here once; implementations inherit them.
 */
export interface RuntimeStore
  extends
    ThreadStore,
    CheckpointStore,
    TaskResultStore,
    InterruptStore,
    IdempotencyStore,
    RunStore,
    LeaseStore {
  /** The serializer this store encodes values with. */
  readonly serializer: Serializer;
  /** The capabilities this store offers beyond the runtime. */
  readonly capabilities: StoreCapabilities;
  /** Releases connections and file handles. */
  close(): Promise<void>;
}

/**
 * A runtime store with every capability but the optional ones ({@link OptionalStoreCapability}):
 * what Rein's shipped stores (memory, SQLite, Postgres) implement. Code that serves a feature types its store by the roles it uses
 * ({@link RuntimeStore} and the capability's interface), not by this union.
 */
export interface Checkpointer
  extends
    RuntimeStore,
    ThreadCatalogStore,
    ThreadHistoryStore,
    InterruptQueueStore,
    DeadlineTimerStore,
    RunRecoveryStore,
    SteeringStore,
    LeaseStatusStore,
    SideRecordStore,
    AuditChainStore,
    EscalationLadderStore,
    NarrowReadStore,
    BulkAnswerStore,
    PendingSummaryStore,
    WebhookOutboxStore,
    ApiKeyCapability {
  /** Every capability of {@link CheckpointerCapability}, declared. */
  readonly capabilities: { readonly [K in CheckpointerCapability]: true } & StoreCapabilities;
}

/**
 * Every member a store may have: a {@link Checkpointer}'s and the optional capabilities' (what a
 * view over any store may override).
 */
export type EveryCapabilityStore = Checkpointer & LeaseReadStore;
