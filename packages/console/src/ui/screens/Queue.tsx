/**
 * The approval queue as an inbox: every pending interrupt of the tenant, newest first, live over
 * SSE, in keyset pages with the total count; filters by app (root graph), sub-agent graph, thread
 * and kind. On a wide screen the selected question opens beside the list. Questions can be
 * checked for one bulk decision (the bar above the list). Keys: j/k move (list and pane
 * together), Enter opens, x checks, a accepts where the payload allows it and it can be undone.
 */
import { useEffect, useMemo, useState } from "react";
import type { InterruptListItem } from "@rein/client";
import { kindOf, pageRange } from "../format.ts";
import { useNow } from "../live.ts";
import { useQueuePages } from "../pages.ts";
import { Filters, type FilterValues } from "../parts/Filters.tsx";
import { KeyHint, QueueHeading, QueueNotices } from "../parts/QueueHeading.tsx";
import { QueueList } from "../parts/QueueList.tsx";
import { acceptFromQueue, type Notice } from "../queue-accept.ts";
import { useChecked, useQueueKeys, useSelection, useWide } from "../queue-state.ts";
import type { Session } from "../session.ts";
import { Decision } from "./Decision.tsx";

/** Questions per page. */
const PAGE = 100;

/** The queue screen. */
export function Queue({ session }: { session: Session }) {
  const [filters, setFilters] = useState<FilterValues>({
    graph: "",
    subAgentGraph: "",
    threadId: "",
    kind: "",
  });
  const { kind } = filters;
  const graphs = useGraphs(session);
  const [notice, setNotice] = useState<Notice | null>(null);
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
  const items = useMemo(
    () => (queue.items ?? []).filter((item) => !kind || kindOf(item) === kind),
    [queue.items, kind],
  );
  const selection = useSelection(items);
  const checked = useChecked();
  const accept = (item: InterruptListItem) => acceptFromQueue(session, item, setNotice);
  useQueueKeys(items.length, selection, checked, accept);
  const { current } = selection;
  const range = pageRange(queue.first, queue.items?.length ?? 0, queue.total);
  const done = (text: string) => setNotice({ text, error: false });

  return (
    <section aria-labelledby="queue-title" className="queue-screen">
      <QueueHeading queue={queue} range={range} />
      <Filters values={filters} graphs={graphs} onChange={setFilters} />
      <KeyHint />
      <QueueNotices notice={notice} feedError={queue.error} />
      <div className={wide ? "inbox split" : "inbox"}>
        <QueueList
          session={session}
          queue={queue}
          items={items}
          range={range}
          selection={selection}
          checked={checked}
          now={now}
          onDone={done}
        />
        {wide && current && (
          <aside className="pane" aria-label="Selected question">
            <Decision
              key={current.id}
              session={session}
              threadId={current.threadId}
              interruptId={current.id}
              embedded
              liveItems={queue.items}
              onSent={done}
            />
          </aside>
        )}
      </div>
    </section>
  );
}

/** The graphs the server runs, for the app filter (none when it cannot say). */
function useGraphs(session: Session): string[] {
  const [graphs, setGraphs] = useState<string[]>([]);
  useEffect(() => {
    session.client
      .health()
      .then((h) => setGraphs(h.graphs))
      .catch(() => setGraphs([]));
  }, [session.client]);
  return graphs;
}
