/**
 * The queue's list: the select-all box, the bulk bar for the checked questions, one row a
 * question, and the pager.
 */
import type { InterruptListItem } from "@rein/client";
import { count } from "../format.ts";
import type { QueuePages } from "../pages.ts";
import type { Checked, QueueSelection } from "../queue-state.ts";
import type { Session } from "../session.ts";
import { BulkBar } from "./BulkBar.tsx";
import { QueueRow } from "./QueueRow.tsx";

/** The list of the page's questions (`items`, filtered by kind) and what acts on it. */
export function QueueList(props: {
  session: Session;
  queue: QueuePages;
  items: InterruptListItem[];
  range: string;
  selection: QueueSelection;
  checked: Checked;
  now: number;
  onDone: (text: string) => void;
}) {
  const { session, queue, items, selection, checked } = props;
  const picked = items.filter((i) => checked.has(i.id));
  return (
    <div className="list">
      {queue.items && items.length === 0 && (
        <p className="empty">Nothing is waiting for a decision.</p>
      )}
      {items.length > 0 && (
        <SelectAll
          count={items.length}
          picked={picked.length}
          onChange={(on) =>
            checked.check(
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
        onDone={props.onDone}
        onClear={checked.clear}
        onDeselect={(ids) => checked.check(ids, false)}
      />
      {items.length > 0 && (
        <ol className="queue" aria-label="Pending interrupts, newest first">
          {items.map((item, at) => (
            <QueueRow
              key={item.id}
              item={item}
              selected={item === selection.current}
              checked={checked.has(item.id)}
              now={props.now}
              onSelect={() => selection.select(at)}
              onCheck={(on) => checked.check([item.id], on)}
            />
          ))}
        </ol>
      )}
      <Pager queue={queue} range={props.range} />
    </div>
  );
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
