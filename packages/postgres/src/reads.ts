/**
 * The reads that come back with a lease or an answer in the same round trip (`lease_and_read`
 * and `answer_batch`, migration 5), decoded as the store's own read methods decode them.
 */
import type { TaskId } from "@rein/core";
import {
  lazyPendingPage,
  type CheckpointRecord,
  type ContinuationAsk,
  type ContinuationReadResults,
  type LeaseReadResults,
  type LeaseReads,
  type TaskResultKind,
  type ThreadHead,
} from "@rein/core/store";
import type { CheckpointRow, InterruptRow, RowCodec, RunRow, ThreadRow } from "./codec.ts";
import type { ChainRange } from "./chains.ts";

/** `thread_head`'s answer. */
export interface HeadJson {
  checkpoint: CheckpointRow | null;
  head_id: string | null;
  run: RunRow | null;
  thread: ThreadRow | null;
  pending: number;
  steering: string[];
}

/** `lease_and_read`'s answer when the lease was taken. */
export interface LeaseJson {
  token: number;
  head: HeadJson;
  request: { result: string | null } | null;
  pending: { total: number; items: InterruptRow[] } | null;
  interrupts: InterruptRow[] | null;
  run: RunRow | null;
  run_pending: InterruptRow[] | null;
}

/** The continuation's reads in `answer_batch`'s answer. */
export interface ContinuationJson {
  head: HeadJson;
  chains: ChainRange[];
  kinds: [taskId: string, kind: TaskResultKind["kind"]][];
  tasks: InterruptRow[] | null;
}

/** The head read: `known` itself when it is still the head (its row was not sent). */
export function decodeHead(
  codec: RowCodec,
  row: HeadJson | undefined,
  known?: CheckpointRecord,
): ThreadHead {
  const reuse = known !== undefined && known.id === row?.head_id;
  return {
    checkpoint: reuse ? known : row?.checkpoint ? codec.checkpoint(row.checkpoint) : undefined,
    run: row?.run ? codec.run(row.run) : undefined,
    thread: row?.thread ? codec.thread(row.thread) : undefined,
    pendingInterrupts: row?.pending ?? 0,
    steering: (row?.steering ?? []).map((record) => codec.decode(record)),
  };
}

/** The lease's reads, each as the method it stands for returns it. */
export function decodeLeaseReads(
  codec: RowCodec,
  json: LeaseJson,
  asked: LeaseReads,
): LeaseReadResults {
  const interrupt = (row: InterruptRow) => codec.interrupt(row);
  return {
    head: decodeHead(codec, json.head, asked.known),
    ...(asked.requestId !== undefined
      ? {
          request: json.request
            ? {
                result:
                  json.request.result === null ? undefined : codec.decode(json.request.result),
              }
            : undefined,
        }
      : {}),
    ...(json.pending
      ? { pending: lazyPendingPage(json.pending.items, json.pending.total, interrupt) }
      : {}),
    ...(json.interrupts ? { interrupts: json.interrupts.map(interrupt) } : {}),
    ...(asked.runId !== undefined
      ? {
          run: json.run ? codec.run(json.run) : undefined,
          runPending: (json.run_pending ?? []).map(interrupt),
        }
      : {}),
  };
}

/** The continuation's reads but its values (which need the chains rebuilt). */
export function decodeContinuation(
  codec: RowCodec,
  json: ContinuationJson,
  ask: ContinuationAsk,
  values: Record<string, unknown>,
): ContinuationReadResults {
  return {
    head: decodeHead(codec, json.head, ask.head),
    values,
    kinds: json.kinds.map(([taskId, kind]) => ({ taskId: taskId as TaskId, kind })),
    ...(json.tasks ? { taskInterrupts: json.tasks.map((row) => codec.interrupt(row)) } : {}),
  };
}
