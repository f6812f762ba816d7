/**
 * The queue's filters: the app (the root graph: every question of its run tree), the sub-agent
 * graph (the run that asked), the thread — all sent to the server — and the kind, applied here.
 */
import { KINDS, type QueueKind } from "../format.ts";

/** What the reviewer filters by. */
export interface FilterValues {
  graph: string;
  subAgentGraph: string;
  threadId: string;
  kind: QueueKind | "";
}

/** The filter form. */
export function Filters(props: {
  values: FilterValues;
  graphs: string[];
  onChange: (values: FilterValues) => void;
}) {
  const { values, graphs } = props;
  const set = (patch: Partial<FilterValues>) => props.onChange({ ...values, ...patch });
  return (
    <form className="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
      <label>
        App
        <select value={values.graph} onChange={(e) => set({ graph: e.target.value })}>
          <option value="">All apps</option>
          {graphs.map((g) => (
            <option key={g} value={g}>
              {g}
            </option>
          ))}
        </select>
      </label>
      <label>
        Sub-agent graph
        <input
          type="search"
          value={values.subAgentGraph}
          placeholder="e.g. refund_agent"
          onChange={(e) => set({ subAgentGraph: e.target.value })}
        />
      </label>
      <label>
        Thread
        <input
          type="search"
          value={values.threadId}
          placeholder="thread id"
          onChange={(e) => set({ threadId: e.target.value })}
        />
      </label>
      <label>
        Kind
        <select
          value={values.kind}
          onChange={(e) => set({ kind: e.target.value as QueueKind | "" })}
        >
          <option value="">All kinds</option>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </label>
    </form>
  );
}
