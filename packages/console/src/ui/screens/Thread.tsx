/**
 * The thread screen, read as a reviewer reads a case: the run tree (root run and sub-agents, each
 * status in words, the questions each waits on), each run's state and its conversation, then the
 * checkpoint history and the steering and audit logs. The state's raw JSON is one toggle away.
 * It re-reads whenever the thread's pending interrupts change (live feed).
 */
import { useState } from "react";
import type { Thread } from "@rein/client";
import { Id } from "../parts/Id.tsx";
import { RunTreeView } from "../parts/RunTree.tsx";
import { RawState, RunStates } from "../parts/RunStates.tsx";
import { Status } from "../parts/Status.tsx";
import { AuditLog, HistoryTimeline, SteeringLog } from "../parts/ThreadLogs.tsx";
import { href } from "../router.ts";
import type { Session } from "../session.ts";
import { useThreadData } from "../thread-data.ts";

/** The thread screen. */
export function ThreadScreen({ session, threadId }: { session: Session; threadId: string }) {
  const { data, error } = useThreadData(session, threadId);
  const [raw, setRaw] = useState(false);

  if (error)
    return (
      <p role="alert" className="error">
        {error}
      </p>
    );
  if (!data) return <p className="loading">Loading…</p>;
  const { thread, tree, state } = data;

  return (
    <section aria-labelledby="thread-title" className="thread">
      <ThreadHeading thread={thread} />
      <p className="view-toggle">
        <button type="button" aria-pressed={raw} onClick={() => setRaw(!raw)}>
          Raw JSON
        </button>{" "}
        <span className="hint">
          {raw ? "Showing the state as stored." : "The state as stored, one click away."}
        </span>
      </p>
      <div className="columns thread-columns">
        <RunTreeView tree={tree} pending={thread.pendingInterrupts} threadId={threadId} />
        {raw ? <RawState state={state} /> : <RunStates thread={thread} tree={tree} state={state} />}
      </div>
      <HistoryTimeline history={data.history} />
      <SteeringLog audit={data.audit} />
      <AuditLog audit={data.audit} chain={data.chain} />
    </section>
  );
}

/** The breadcrumb, the thread's id and status, its graph and head checkpoint. */
function ThreadHeading({ thread }: { thread: Thread }) {
  return (
    <>
      <p className="crumbs">
        <a href={href({ screen: "queue" })}>Queue</a>
      </p>
      <h1 id="thread-title" className="with-id">
        <span>Thread</span>{" "}
        <span className="id-text" title={thread.threadId}>
          {thread.threadId}
        </span>{" "}
        <Status value={thread.status} />
      </h1>
      <p className="hint with-id">
        <span>Graph {thread.graph} · head checkpoint</span>{" "}
        {thread.headCheckpointId ? (
          <Id value={thread.headCheckpointId} label="Head checkpoint id" />
        ) : (
          "—"
        )}
      </p>
    </>
  );
}
