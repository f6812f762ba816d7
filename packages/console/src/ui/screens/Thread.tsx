/**
 * The thread screen: the run tree with statuses and the pending interrupts on its nodes, the
 * current state, the checkpoint history as a timeline, and the steering and audit logs with
 * actors. It re-reads whenever the thread's pending interrupts change (live feed).
 */
import { useCallback, useEffect, useState } from "react";
import { Id } from "../parts/Id.tsx";
import type {
  AuditRecord,
  AuditVerification,
  Interrupt,
  RunTree,
  StateSnapshot,
  Thread,
} from "@rein/client";
import { AuditChainStatus } from "../parts/AuditChain.tsx";
import { describeError } from "../errors.ts";
import { payloadSummary, shortId } from "../format.ts";
import { useLiveQueue } from "../live.ts";
import { href } from "../router.ts";
import type { Session } from "../session.ts";

interface Loaded {
  thread: Thread;
  tree: RunTree | null;
  state: StateSnapshot;
  history: StateSnapshot[];
  audit: AuditRecord[];
  /** The audit chain's verdict; null when the server could not give one. */
  chain: AuditVerification | null;
}

/** The thread screen. */
export function ThreadScreen({ session, threadId }: { session: Session; threadId: string }) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
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
      setLoaded({ thread, tree, state, history: history.items, audit: audit.items, chain });
      setError(null);
    } catch (e) {
      setError(describeError(e));
    }
  }, [session.client, threadId]);

  useEffect(() => {
    void load();
  }, [load, live.version]);

  if (error)
    return (
      <p role="alert" className="error">
        {error}
      </p>
    );
  if (!loaded) return <p className="loading">Loading…</p>;
  const { thread, tree, state, history, audit, chain } = loaded;
  const brokenId = chain?.ok === false ? (chain.firstBroken?.id ?? null) : null;
  const steering = audit.filter((a) => a.action === "steer");

  return (
    <section aria-labelledby="thread-title" className="thread">
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
      <div className="columns">
        <section aria-labelledby="tree-title">
          <h2 id="tree-title">Run tree</h2>
          {tree ? (
            <ul className="tree" aria-label="Run tree">
              <RunNode run={tree} pending={thread.pendingInterrupts} threadId={threadId} />
            </ul>
          ) : (
            <p>No run yet.</p>
          )}
        </section>
        <section aria-labelledby="state-title">
          <h2 id="state-title">Current state</h2>
          {/* Focusable so a keyboard can scroll a long state (axe: scrollable-region-focusable). */}
          <pre className="state" aria-label="State values" tabIndex={0}>
            {JSON.stringify(state.values, null, 2)}
          </pre>
          {state.next.length > 0 && <p>Next: {state.next.join(", ")}</p>}
          {(state.subgraphs ?? []).map((child) => (
            <details key={child.runId} open={child.status === "interrupted"}>
              <summary>
                {child.namespace.join(" › ")} <Status value={child.status} />
              </summary>
              <pre aria-label={`State of ${child.namespace.join(" › ")}`} tabIndex={0}>
                {JSON.stringify(child.values, null, 2)}
              </pre>
            </details>
          ))}
        </section>
      </div>
      <section aria-labelledby="history-title">
        <h2 id="history-title">Checkpoint history</h2>
        <ol className="timeline" aria-label="Checkpoints, newest first">
          {history.map((h) => (
            <li key={h.checkpointId ?? h.step}>
              <span className="when">
                {h.createdAt ? new Date(h.createdAt).toLocaleTimeString() : ""}
              </span>{" "}
              step {h.step} · {h.source ?? "—"}
              {h.next.length > 0 && <> · next {h.next.join(", ")}</>}
              {h.interrupts.length > 0 && <> · {h.interrupts.length} pending</>}
              <code title={h.checkpointId ?? ""}>{shortId(h.checkpointId, 20)}</code>
            </li>
          ))}
        </ol>
      </section>
      <section aria-labelledby="steering-log-title">
        <h2 id="steering-log-title">Steering log</h2>
        {steering.length === 0 ? (
          <p>No steering yet.</p>
        ) : (
          <ul className="log" aria-label="Steering notes">
            {steering.map((a) => (
              <li key={a.id}>
                <strong>{a.actor}</strong>: “{textOf(a.data)}”{" "}
                <span className="when">{new Date(a.createdAt).toLocaleTimeString()}</span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="audit-title">
        <h2 id="audit-title">Audit log</h2>
        <AuditChainStatus result={chain} />
        {audit.length === 0 ? (
          <p>Nothing recorded yet.</p>
        ) : (
          <table className="audit" aria-label="Audit log, oldest first">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Action</th>
                <th scope="col">Actor</th>
                <th scope="col">Interrupt</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {audit.map((a) => (
                <tr key={a.id} className={a.id === brokenId ? "broken" : undefined}>
                  <td data-label="When">{new Date(a.createdAt).toLocaleTimeString()}</td>
                  <td data-label="Action">
                    {a.action}
                    {a.id === brokenId && (
                      <strong className="broken-mark"> · chain broken here</strong>
                    )}
                  </td>
                  <td data-label="Actor">{a.actor}</td>
                  <td data-label="Interrupt">
                    {a.interruptId ? <Id value={a.interruptId} label="Interrupt id" /> : "—"}
                  </td>
                  <td data-label="Detail">
                    <code>{payloadSummary(a.data, 120)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </section>
  );
}

function textOf(data: unknown): string {
  if (
    typeof data === "object" &&
    data !== null &&
    typeof (data as { text?: unknown }).text === "string"
  )
    return (data as { text: string }).text;
  return JSON.stringify(data);
}

/** A status in words, with a class for its colour. */
function Status({ value }: { value: string }) {
  return <span className={`status status-${value}`}>{value}</span>;
}

/** One run of the tree, its pending interrupts, and its children. */
function RunNode(props: { run: RunTree; pending: Interrupt[]; threadId: string }) {
  const { run, pending, threadId } = props;
  const here = pending.filter((i) => i.runId === run.runId);
  const name = run.namespace.length > 0 ? run.namespace.join(" › ") : run.graph;
  return (
    <li data-run-id={run.runId} data-status={run.status}>
      <span className="node-name">{name}</span> <Status value={run.status} />
      {run.error && <span className="error"> {run.error.message}</span>}
      {here.length > 0 && (
        <ul className="interrupts" aria-label={`Pending on ${name}`}>
          {here.map((i) => (
            <li key={i.id}>
              <a href={href({ screen: "decision", threadId, interruptId: i.id })}>
                Answer at {i.node}
              </a>
              : {payloadSummary(i.payload, 80)}
            </li>
          ))}
        </ul>
      )}
      {run.children.length > 0 && (
        <ul>
          {run.children.map((child) => (
            <RunNode key={child.runId} run={child} pending={pending} threadId={threadId} />
          ))}
        </ul>
      )}
    </li>
  );
}
