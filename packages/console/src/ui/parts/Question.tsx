/**
 * The decision screen's account of the question before the answer: the breadcrumb, where it sits
 * in the run tree with its age and deadline, its ids, that it left the queue, or that it is not
 * pending any more (with what is).
 */
import type { InterruptListItem, Thread } from "@rein/client";
import { deadlineText, duration, treePath } from "../format.ts";
import { href } from "../router.ts";
import { Id } from "./Id.tsx";

/** Queue › Thread, on the screen of its own (not in the split view). */
export function DecisionCrumbs({ threadId }: { threadId: string }) {
  return (
    <p className="crumbs">
      <a href={href({ screen: "queue" })}>Queue</a> ›{" "}
      <a href={href({ screen: "thread", threadId })} className="crumb-id" title={threadId}>
        Thread {threadId}
      </a>
    </p>
  );
}

/** The question is not pending any more: the thread's status and what is pending now. */
export function NotPending({ thread, pending }: { thread: Thread; pending: InterruptListItem[] }) {
  return (
    <>
      <p role="status">
        This question is not pending any more: it was answered, cancelled or timed out. The thread
        is {thread.status}.
      </p>
      <PendingList items={pending} />
    </>
  );
}

/** Links to the interrupts pending in this thread now. */
export function PendingList({ items }: { items: InterruptListItem[] }) {
  if (items.length === 0) return <p>Nothing else is pending in this thread.</p>;
  return (
    <>
      <h2>Pending in this thread now</h2>
      <ul className="pending-now">
        {items.map((i) => (
          <li key={i.id}>
            <a href={href({ screen: "decision", threadId: i.threadId, interruptId: i.id })}>
              {treePath(i)}
            </a>
          </li>
        ))}
      </ul>
    </>
  );
}

/** Where the question sits, how long ago it was asked, its deadline, and its ids. */
export function QuestionWhere(props: {
  item: InterruptListItem;
  threadId: string;
  now: number;
  embedded: boolean;
}) {
  const { item, threadId, now } = props;
  return (
    <>
      <p className="where">
        <span className="path">{treePath(item)}</span>
        <span>asked {duration(now - Date.parse(item.createdAt))} ago</span>
        <span>deadline {deadlineText(item.deadline, now)}</span>
        {props.embedded && (
          <a href={href({ screen: "decision", threadId, interruptId: item.id })}>
            Open on its own page
          </a>
        )}
      </p>
      <details className="ids">
        <summary>Ids</summary>
        <dl className="meta">
          <Meta term="Thread" value={threadId} />
          <Meta term="Interrupt" value={item.id} />
          <Meta term="Node" value={item.node} />
          <Meta term="Task" value={item.taskId} />
          <Meta term="Sub-agent" value={item.subAgentId ?? "—"} />
          <Meta term="Checkpoint" value={item.checkpointId} />
        </dl>
      </details>
    </>
  );
}

function Meta({ term, value }: { term: string; value: string }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>
        <Id value={value} label={`${term} id`} />
      </dd>
    </div>
  );
}

/** The live feed says the question left the queue since the screen opened. */
export function LeftTheQueue() {
  return (
    <p role="status" className="conflict-soon">
      This question left the queue since you opened it (answered elsewhere, cancelled or timed out).
      An answer sent now will be refused with the latest state.
    </p>
  );
}
