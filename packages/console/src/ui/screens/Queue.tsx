/**
 * The approval queue as an inbox: every pending interrupt of the tenant, newest first, live over
 * SSE, in keyset pages with the total count; filters by app (root graph), sub-agent graph, thread
 * and kind. On a wide screen the selected question opens beside the list. Questions can be
 * checked for one bulk decision (the bar above the list). Keys: j/k move (list and pane
 * together), Enter opens, x checks, a accepts where the payload allows it and it can be undone.
 */
import { useEffect, useMemo, useState, useSyncExternalStore } from "react";
import type { InterruptListItem } from "@rein/client";
import { asDecision, decisionAnswer } from "../decision.ts";
import { describeError } from "../errors.ts";
import { count, humanize, kindOf } from "../format.ts";
import { useNow } from "../live.ts";
import { useQueuePages, type QueuePages } from "../pages.ts";
import { BulkBar } from "../parts/BulkBar.tsx";
import { Filters, type FilterValues } from "../parts/Filters.tsx";
import { QueueRow } from "../parts/QueueRow.tsx";
import { navigate } from "../router.ts";
import type { Session } from "../session.ts";
import { Decision } from "./Decision.tsx";

/** Questions per page. */
const PAGE = 100;
const WIDE = "(min-width: 1100px)";

const typing = (target: EventTarget | null): boolean =>
  target instanceof HTMLElement &&
  (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));

function useWide(): boolean {
  return useSyncExternalStore(
    (onChange) => {
      const query = window.matchMedia(WIDE);
      query.addEventListener("change", onChange);
      return () => query.removeEventListener("change", onChange);
    },
    () => window.matchMedia(WIDE).matches,
  );
}

/** The queue screen. */
export function Queue({ session }: { session: Session }) {
  const [filters, setFilters] = useState<FilterValues>({
    graph: "",
    subAgentGraph: "",
    threadId: "",
    kind: "",
  });
  const { kind } = filters;
  const [graphs, setGraphs] = useState<string[]>([]);
  // The selection: its id, and its place, so answering it moves on to the next one.
  const [selected, setSelected] = useState<{ id: string | null; at: number }>({ id: null, at: 0 });
  const [notice, setNotice] = useState<{ text: string; error: boolean } | null>(null);
  // Checked for a bulk decision, by id: a question that leaves the live page leaves the selection.
  const [checked, setChecked] = useState<ReadonlySet<string>>(new Set());
  const queue = useQueuePages(
    session.client,
    {
      graph: filters.graph,
      subAgentGraph: filters.subAgentGraph.trim(),
      threadId: filters.threadId.trim(),
    },
    PAGE,
  );
  const now = useNow();
  const wide = useWide();

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
  const found = items.findIndex((i) => i.id === selected.id);
  const index = found >= 0 ? found : Math.max(0, Math.min(selected.at, items.length - 1));
  const current = items[index];
  const select = (at: number) => {
    const item = items[at];
    if (item) setSelected({ id: item.id, at });
  };

  const accept = (item: InterruptListItem) => acceptFromQueue(session, item, setNotice);
  const picked = items.filter((i) => checked.has(i.id));
  const check = (ids: string[], on: boolean) =>
    setChecked((was) => {
      const next = new Set(was);
      for (const id of ids) {
        if (on) next.add(id);
        else next.delete(id);
      }
      return next;
    });

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (typing(event.target) || event.metaKey || event.ctrlKey || event.altKey) return;
      const move = (by: number) =>
        select(Math.min(Math.max(index + by, 0), Math.max(items.length - 1, 0)));
      if (event.key === "j") move(1);
      else if (event.key === "k") move(-1);
      else if (event.key === "Enter" && current && !(event.target instanceof HTMLAnchorElement))
        navigate({ screen: "decision", threadId: current.threadId, interruptId: current.id });
      else if (event.key === "a" && current) accept(current);
      else if (event.key === "x" && current) check([current.id], !checked.has(current.id));
      else return;
      event.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });

  useEffect(() => {
    document.getElementById(`row-${current?.id ?? ""}`)?.scrollIntoView({ block: "nearest" });
  }, [current?.id]);

  const last = queue.first + (queue.items?.length ?? 0);
  const range =
    queue.total === null
      ? ""
      : queue.total === 0
        ? "0 pending"
        : `${count(queue.first + 1)}–${count(last)} of ${count(queue.total)} pending`;

  return (
    <section aria-labelledby="queue-title" className="queue-screen">
      <div className="heading">
        <h1 id="queue-title">Pending approvals</h1>
        <p className="count" aria-live="polite">
          {range}
        </p>
        <p className={queue.live ? "live on" : "live"} role="status">
          {queue.live ? "Live" : queue.items ? "Reconnecting…" : "Connecting…"}
        </p>
      </div>
      <Filters values={filters} graphs={graphs} onChange={setFilters} />
      <p className="hint">
        Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>Enter</kbd> opens, <kbd>x</kbd> selects,{" "}
        <kbd>a</kbd> accepts where allowed (never an irreversible action).
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
      <div className={wide ? "inbox split" : "inbox"}>
        <div className="list">
          {queue.items && items.length === 0 && (
            <p className="empty">Nothing is waiting for a decision.</p>
          )}
          {items.length > 0 && (
            <SelectAll
              count={items.length}
              picked={picked.length}
              onChange={(on) =>
                check(
                  items.map((i) => i.id),
                  on,
                )
              }
            />
          )}
          <BulkBar
            client={session.client}
            me={session.me}
            selected={picked}
            onDone={(text) => setNotice({ text, error: false })}
            onClear={() => setChecked(new Set())}
            onDeselect={(ids) => check(ids, false)}
          />
          {items.length > 0 && (
            <ol className="queue" aria-label="Pending interrupts, newest first">
              {items.map((item, at) => (
                <QueueRow
                  key={item.id}
                  item={item}
                  selected={item === current}
                  checked={checked.has(item.id)}
                  now={now}
                  onSelect={() => select(at)}
                  onCheck={(on) => check([item.id], on)}
                />
              ))}
            </ol>
          )}
          <Pager queue={queue} range={range} />
        </div>
        {wide && current && (
          <aside className="pane" aria-label="Selected question">
            <Decision
              key={current.id}
              session={session}
              threadId={current.threadId}
              interruptId={current.id}
              embedded
              liveItems={queue.items}
              onSent={(text) => setNotice({ text, error: false })}
            />
          </aside>
        )}
      </div>
    </section>
  );
}

/** Accepts a decision from the queue (the `a` key), saying why when it may not. */
function acceptFromQueue(
  session: Session,
  item: InterruptListItem,
  setNotice: (notice: { text: string; error: boolean }) => void,
): void {
  const decision = asDecision(item.payload);
  if (!decision?.allow.accept) {
    setNotice({ text: "This one cannot be accepted as is; open it to answer.", error: true });
    return;
  }
  if (decision.irreversible) {
    setNotice({
      text: `${humanize(decision.action)} cannot be undone, so the a key does not accept it: open it and confirm.`,
      error: true,
    });
    return;
  }
  setNotice({ text: `Accepting ${humanize(decision.action)}…`, error: false });
  session.client
    .resume(item.threadId, {
      target: { runId: item.runId, namespace: item.namespace, interruptId: item.id },
      resume: decisionAnswer("accept"),
      expectedCheckpointId: item.checkpointId,
    })
    .then((result) =>
      setNotice({
        text: `Accepted ${humanize(decision.action)} on thread ${item.threadId}; the thread is now ${result.status}.`,
        error: false,
      }),
    )
    .catch((error: unknown) => setNotice({ text: describeError(error), error: true }));
}

/** The page's select-all box: checked when all are, mixed when some are. */
function SelectAll(props: { count: number; picked: number; onChange: (on: boolean) => void }) {
  const { count: n, picked } = props;
  return (
    <label className="select-all">
      <input
        type="checkbox"
        checked={n > 0 && picked === n}
        ref={(box) => {
          if (box) box.indeterminate = picked > 0 && picked < n;
        }}
        onChange={(e) => props.onChange(e.target.checked)}
      />
      Select all on this page ({count(n)})
    </label>
  );
}

/** Newer / older pages, by keyset cursor, with the range shown. */
function Pager({ queue, range }: { queue: QueuePages; range: string }) {
  if (queue.page === 0 && !queue.hasOlder) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={queue.page === 0} onClick={queue.newer}>
        Newer
      </button>
      <span>{range}</span>
      <button type="button" disabled={!queue.hasOlder} onClick={queue.older}>
        Older
      </button>
    </nav>
  );
}
