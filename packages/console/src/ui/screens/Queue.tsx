/**
 * The approval queue: every pending interrupt of the tenant, newest first, live over SSE, with
 * filters and keyboard navigation (j/k move, Enter opens, a accepts where the payload allows it).
 */
import { useEffect, useMemo, useState } from "react";
import type { InterruptListItem } from "@rein/client";
import { asDecision, decisionAnswer } from "../decision.ts";
import { describeError } from "../errors.ts";
import {
  KINDS,
  deadlineText,
  duration,
  kindOf,
  payloadSummary,
  shortId,
  treePath,
  type QueueKind,
} from "../format.ts";
import { useLiveQueue, useNow } from "../live.ts";
import { href, navigate } from "../router.ts";
import type { Session } from "../session.ts";

const typing = (target: EventTarget | null): boolean =>
  target instanceof HTMLElement &&
  (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));

/** The queue screen. */
export function Queue({ session }: { session: Session }) {
  const [graph, setGraph] = useState("");
  const [threadId, setThreadId] = useState("");
  const [kind, setKind] = useState<QueueKind | "">("");
  const [graphs, setGraphs] = useState<string[]>([]);
  const [selected, setSelected] = useState(0);
  const [notice, setNotice] = useState<{ text: string; error: boolean } | null>(null);
  const queue = useLiveQueue(session.client, { graph, threadId: threadId.trim() });
  const now = useNow();

  useEffect(() => {
    session.client
      .health()
      .then((h) => setGraphs(h.graphs))
      .catch(() => setGraphs([]));
  }, [session.client]);

  const items = useMemo(
    () => (queue.items ?? []).filter((item) => !kind || kindOf(item) === kind),
    [queue.items, kind],
  );
  const current = items[Math.min(selected, items.length - 1)];

  const accept = (item: InterruptListItem) => {
    const decision = asDecision(item.payload);
    if (!decision?.allow.accept) {
      setNotice({ text: "This one cannot be accepted as is; open it to answer.", error: true });
      return;
    }
    setNotice({ text: `Accepting ${decision.action}…`, error: false });
    session.client
      .resume(item.threadId, {
        target: { runId: item.runId, namespace: item.namespace, interruptId: item.id },
        resume: decisionAnswer("accept"),
        expectedCheckpointId: item.checkpointId,
      })
      .then((result) =>
        setNotice({
          text: `Accepted ${decision.action} on thread ${item.threadId}; the thread is now ${result.status}.`,
          error: false,
        }),
      )
      .catch((error: unknown) => setNotice({ text: describeError(error), error: true }));
  };

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (typing(event.target) || event.metaKey || event.ctrlKey || event.altKey) return;
      if (event.key === "j") setSelected((i) => Math.min(i + 1, Math.max(items.length - 1, 0)));
      else if (event.key === "k") setSelected((i) => Math.max(i - 1, 0));
      else if (event.key === "Enter" && current && !(event.target instanceof HTMLAnchorElement))
        navigate({ screen: "decision", threadId: current.threadId, interruptId: current.id });
      else if (event.key === "a" && current) accept(current);
      else return;
      event.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });

  useEffect(() => {
    document.getElementById(`row-${current?.id ?? ""}`)?.scrollIntoView({ block: "nearest" });
  }, [current?.id]);

  return (
    <section aria-labelledby="queue-title">
      <div className="heading">
        <h1 id="queue-title">Pending approvals</h1>
        <p className={queue.live ? "live on" : "live"} role="status">
          {queue.live ? "Live" : queue.items ? "Reconnecting…" : "Connecting…"}
        </p>
      </div>
      <form className="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Graph
          <select value={graph} onChange={(e) => setGraph(e.target.value)}>
            <option value="">All graphs</option>
            {graphs.map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
        </label>
        <label>
          Thread
          <input
            type="search"
            value={threadId}
            placeholder="thread id"
            onChange={(e) => setThreadId(e.target.value)}
          />
        </label>
        <label>
          Kind
          <select value={kind} onChange={(e) => setKind(e.target.value as QueueKind | "")}>
            <option value="">All kinds</option>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
      </form>
      <p className="hint">
        Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>Enter</kbd> opens, <kbd>a</kbd> accepts where
        allowed.
      </p>
      {notice && (
        <p role={notice.error ? "alert" : "status"} className={notice.error ? "error" : "notice"}>
          {notice.text}
        </p>
      )}
      {queue.error && (
        <p role="alert" className="error">
          {queue.error}
        </p>
      )}
      {queue.items && items.length === 0 && (
        <p className="empty">Nothing is waiting for a decision.</p>
      )}
      {items.length > 0 && (
        <table className="queue" aria-label="Pending interrupts, newest first">
          <thead>
            <tr>
              <th scope="col">Where</th>
              <th scope="col">Asks</th>
              <th scope="col">Thread</th>
              <th scope="col">Node</th>
              <th scope="col">Task</th>
              <th scope="col">Sub-agent</th>
              <th scope="col">Checkpoint</th>
              <th scope="col">Age</th>
              <th scope="col">Deadline</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item, index) => (
              <tr
                key={item.id}
                id={`row-${item.id}`}
                aria-selected={item === current}
                className={item === current ? "selected" : undefined}
                data-interrupt-id={item.id}
                onClick={() => setSelected(index)}
              >
                <td data-label="Where">
                  <a
                    href={href({
                      screen: "decision",
                      threadId: item.threadId,
                      interruptId: item.id,
                    })}
                    aria-label={`Open ${treePath(item)} on thread ${item.threadId}`}
                  >
                    {treePath(item)}
                  </a>
                  <span className="kind">{kindOf(item)}</span>
                </td>
                <td data-label="Asks">{payloadSummary(item.payload)}</td>
                <td data-label="Thread">
                  <a href={href({ screen: "thread", threadId: item.threadId })}>{item.threadId}</a>
                </td>
                <td data-label="Node">{item.node}</td>
                <td data-label="Task" title={item.taskId}>
                  {shortId(item.taskId)}
                </td>
                <td data-label="Sub-agent" title={item.subAgentId ?? ""}>
                  {item.subAgentId ? shortId(item.subAgentId, 20) : "—"}
                </td>
                <td data-label="Checkpoint" title={item.checkpointId}>
                  {shortId(item.checkpointId, 12)}
                </td>
                <td data-label="Age">{duration(now - Date.parse(item.createdAt))}</td>
                <td data-label="Deadline">{deadlineText(item.deadline, now)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
