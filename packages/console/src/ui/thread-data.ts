/**
 * Everything the thread screen shows, read through the client in one go and read again whenever
 * the thread's pending interrupts change (the live feed): the thread, its run tree, its state
 * with each sub-agent's, the checkpoint history, the audit log and the chain's verdict.
 */
import { useCallback, useEffect, useState } from "react";
import type { AuditRecord, AuditVerification, RunTree, StateSnapshot, Thread } from "@rein/client";
import { describeError } from "./errors.ts";
import { useLiveQueue } from "./live.ts";
import type { Session } from "./session.ts";

/** What the thread screen shows. */
export interface ThreadData {
  thread: Thread;
  tree: RunTree | null;
  state: StateSnapshot;
  history: StateSnapshot[];
  audit: AuditRecord[];
  /** The audit chain's verdict; null when the server could not give one. */
  chain: AuditVerification | null;
}

/** The thread's data (null while loading) and the error of the last read. */
export function useThreadData(
  session: Session,
  threadId: string,
): { data: ThreadData | null; error: string | null } {
  const [data, setData] = useState<ThreadData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const live = useLiveQueue(session.client, { threadId });

  const load = useCallback(async () => {
    const c = session.client;
    try {
      const thread = await c.getThread(threadId);
      const [tree, state, history, audit, chain] = await Promise.all([
        thread.runId ? c.getRun(threadId, thread.runId) : Promise.resolve(null),
        c.getState(threadId, { subgraphs: true }),
        c.getHistory(threadId, { limit: 50 }),
        c.listAudit({ threadId, limit: 200 }),
        // The verdict is extra: a server that cannot give one leaves the screen readable.
        c.verifyAudit({ threadId }).catch(() => null),
      ]);
      setData({ thread, tree, state, history: history.items, audit: audit.items, chain });
      setError(null);
    } catch (e) {
      setError(describeError(e));
    }
  }, [session.client, threadId]);

  useEffect(() => {
    void load();
  }, [load, live.version]);

  return { data, error };
}
