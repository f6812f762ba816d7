/**
 * The run tree of a thread: the root run and its sub-agent runs (child namespaces), each with its
 * status in words, where it stands, and the questions it waits on with a link to answer each.
 */
import type { Interrupt, RunTree } from "@rein/client";
import { href } from "../router.ts";
import { pendingInWords, runName, standing } from "../runs.ts";
import { Status } from "./Status.tsx";

/** The whole tree, or a line saying there is no run yet. */
export function RunTreeView(props: {
  tree: RunTree | null;
  pending: Interrupt[];
  threadId: string;
}) {
  return (
    <section aria-labelledby="tree-title">
      <h2 id="tree-title">Run tree</h2>
      {props.tree ? (
        <ul className="tree" aria-label="Run tree">
          <RunNode run={props.tree} pending={props.pending} threadId={props.threadId} />
        </ul>
      ) : (
        <p>No run yet.</p>
      )}
    </section>
  );
}

/** One run of the tree, its pending questions, and its children. */
function RunNode(props: { run: RunTree; pending: Interrupt[]; threadId: string }) {
  const { run, pending, threadId } = props;
  const name = runName(run);
  return (
    <li data-run-id={run.runId} data-status={run.status}>
      <span className="node-name">{name}</span>{" "}
      {run.namespace.length > 0 && <span className="node-graph">{run.graph}</span>}{" "}
      <Status value={run.status} />
      <p className={run.status === "error" ? "standing-line error" : "standing-line"}>
        {standing(run, pending)}
      </p>
      <PendingList
        name={name}
        items={pending.filter((i) => i.runId === run.runId)}
        threadId={threadId}
      />
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

/** The questions a run waits on, each in words with a link to answer it. */
function PendingList(props: { name: string; items: Interrupt[]; threadId: string }) {
  if (props.items.length === 0) return null;
  return (
    <ul className="interrupts" aria-label={`Pending on ${props.name}`}>
      {props.items.map((i) => (
        <li key={i.id}>
          <span className="asks">{pendingInWords(i)}</span>{" "}
          <a href={href({ screen: "decision", threadId: props.threadId, interruptId: i.id })}>
            Answer at {i.node}
          </a>
        </li>
      ))}
    </ul>
  );
}
