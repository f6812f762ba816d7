/**
 * Each run's state as a reviewer reads it: for the root and every sub-agent, where it is (the
 * next step, the step it paused at), its values as labelled fields and its conversation; or, one
 * toggle away, the same state as raw JSON.
 */
import type { RunTree, StateSnapshot, Thread } from "@rein/client";
import { fieldsOf, splitValues, type Field } from "../conversation.ts";
import { humanize } from "../format.ts";
import { runName, runsOf } from "../runs.ts";
import { Conversation } from "./Conversation.tsx";
import { Status } from "./Status.tsx";

/** What one run holds: the values and where it is. */
interface RunState {
  run: { runId: string; graph: string; namespace: string[]; status: string };
  values: Record<string, unknown>;
  /** The nodes it runs next, or the ones it paused at. */
  at: string[];
}

/** The nodes of a step that have not finished: the ones a run waits at or runs next. */
function unfinished(tasks: StateSnapshot["tasks"]): string[] {
  return tasks.filter((t) => t.status !== "done").map((t) => t.node);
}

/** The root's state and each sub-agent's, in run-tree order (runs the tree lacks go last). */
function runStates(thread: Thread, tree: RunTree | null, state: StateSnapshot): RunState[] {
  const children = state.subgraphs ?? [];
  const root: RunState = {
    run: tree ?? { runId: "", graph: thread.graph, namespace: [], status: thread.status },
    values: state.values,
    at: unfinished(state.tasks),
  };
  const order = new Map((tree ? runsOf(tree) : []).map((r, i) => [r.runId, i]));
  const rank = (runId: string) => order.get(runId) ?? Number.MAX_SAFE_INTEGER;
  const rest = [...children]
    .sort((a, b) => rank(a.runId) - rank(b.runId))
    .map((c) => ({
      run: c,
      values: c.values,
      at: unfinished(c.tasks),
    }));
  return [root, ...rest];
}

/** The state of every run, readable. */
export function RunStates(props: { thread: Thread; tree: RunTree | null; state: StateSnapshot }) {
  return (
    <section aria-labelledby="runs-title" className="run-states">
      <h2 id="runs-title">State and conversation</h2>
      {runStates(props.thread, props.tree, props.state).map((s) => (
        <RunStateView key={s.run.runId || "root"} state={s} />
      ))}
    </section>
  );
}

/** One run: a heading with its status, where it is, its fields and its conversation. */
function RunStateView({ state }: { state: RunState }) {
  const name = runName(state.run);
  const { conversations, rest } = splitValues(state.values);
  const fields = fieldsOf(rest);
  const id = `run-${state.run.runId || "root"}`;
  return (
    <article className="run-state" aria-labelledby={id}>
      <h3 id={id}>
        {name} <Status value={state.run.status} />
      </h3>
      {state.at.length > 0 && (
        <p className="hint">
          {state.run.status === "interrupted" ? "Paused at" : "Next"}: {state.at.join(", ")}
        </p>
      )}
      {fields.length > 0 && <Fields fields={fields} />}
      {conversations.map((c) => (
        <Conversation
          key={c.key}
          turns={c.turns}
          label={
            c.key === "messages"
              ? `Conversation of ${name}, oldest first`
              : `${humanize(c.key)} of ${name}, oldest first`
          }
        />
      ))}
    </article>
  );
}

/** Labelled values; an object's own fields one level down. */
function Fields({ fields }: { fields: Field[] }) {
  return (
    <dl className="fields">
      {fields.map((f) => (
        <div key={f.label}>
          <dt>{f.label}</dt>
          <dd>{"fields" in f ? <Fields fields={f.fields} /> : f.text}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The same state as raw JSON: the root's values, then each sub-agent's. */
export function RawState({ state }: { state: StateSnapshot }) {
  return (
    <section aria-labelledby="raw-title" className="run-states">
      <h2 id="raw-title">State as JSON</h2>
      {/* Focusable so a keyboard can scroll a long state (axe: scrollable-region-focusable). */}
      <pre className="state" aria-label="State values" tabIndex={0}>
        {JSON.stringify(state.values, null, 2)}
      </pre>
      {(state.subgraphs ?? []).map((child) => (
        <div key={child.runId}>
          <h3>
            {child.namespace.join(" › ")} <Status value={child.status} />
          </h3>
          <pre aria-label={`State of ${child.namespace.join(" › ")}`} tabIndex={0}>
            {JSON.stringify(child.values, null, 2)}
          </pre>
        </div>
      ))}
    </section>
  );
}
