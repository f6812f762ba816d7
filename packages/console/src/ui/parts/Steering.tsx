/**
 * The steering box, above the decision: a note for the agent, kept apart from the answer, and
 * which run of the tree reads it — the sub-agent that asked, its parent, or the orchestrator.
 */
import type { InterruptListItem } from "@rein/client";

/** A run of the interrupt's run tree a note can go to. */
export interface SteerTarget {
  runId: string;
  namespace: string[];
  /** `refund (refund_agent)`: how the run is named to the reviewer. */
  label: string;
  /** `this sub-agent`, `its parent`, `the orchestrator`. */
  role: string;
  /** The run that asked: the note goes with the answer, scoped to the question. */
  asking: boolean;
}

/** The runs of the path, the asking run first, then up to the orchestrator. */
export function steerTargets(
  item: Pick<InterruptListItem, "path" | "runId" | "graph">,
): SteerTarget[] {
  const path =
    item.path.length > 0 ? item.path : [{ runId: item.runId, graph: item.graph, node: "" }];
  const last = path.length - 1;
  return path
    .map((entry, k): SteerTarget => {
      const namespace = path.slice(0, k).map((p) => p.node);
      const name = namespace.at(-1);
      return {
        runId: entry.runId,
        namespace,
        label: name ? `${name} (${entry.graph})` : entry.graph,
        role:
          k === last
            ? last === 0
              ? "the run that asked"
              : "this sub-agent"
            : k === 0
              ? k === last - 1
                ? "its parent, the orchestrator"
                : "the orchestrator"
              : "its parent",
        asking: k === last,
      };
    })
    .reverse();
}

/** The steering box. */
export function SteeringBox(props: {
  targets: SteerTarget[];
  target: number;
  onTarget: (index: number) => void;
  text: string;
  onText: (text: string) => void;
  busy: boolean;
  onSteerOnly: () => void;
}) {
  const { targets, target, text, busy } = props;
  const chosen = targets[target] ?? targets[0];
  return (
    <section className="steering" aria-labelledby="steering-title">
      <h2 id="steering-title">Note for the agent</h2>
      {targets.length > 1 ? (
        <fieldset className="targets">
          <legend>Who reads it</legend>
          {targets.map((t, i) => (
            <label key={t.runId} className="choice">
              <input
                type="radio"
                name="steer-target"
                checked={i === target}
                onChange={() => props.onTarget(i)}
              />
              <span>
                {capitalize(t.role)}: <strong>{t.label}</strong>
              </span>
            </label>
          ))}
        </fieldset>
      ) : null}
      <label htmlFor="steering-note">Steering note</label>
      <textarea
        id="steering-note"
        rows={2}
        maxLength={10_000}
        value={text}
        aria-describedby="steering-reader"
        onChange={(e) => props.onText(e.target.value)}
      />
      <p id="steering-reader" className="hint">
        Read by <strong>{chosen?.label}</strong> ({chosen?.role}) the next time it runs
        {chosen && !chosen.asking ? ", and also read by the runs below it" : ""}. It goes with your
        answer below, kept apart from it, or on its own.
      </p>
      <div className="actions">
        <button type="button" disabled={busy || !text.trim()} onClick={props.onSteerOnly}>
          Steer without answering
        </button>
      </div>
    </section>
  );
}

const capitalize = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
