/**
 * Static interrupts (`interruptBefore` / `interruptAfter`). A selector is a node name, or a path
 * into subgraphs such as `"supervisor/research_agent/tools"`, where `*` matches one segment.
 *
 * `invoke(null)` at a static pause: a thread paused only by selectors waits for nobody's answer,
 * so plain continuation continues it (as LangGraph users expect): its static interrupts are
 * answered (recorded in the audit log with the caller as the actor) and the run goes on. Where a
 * dynamic interrupt is pending, a person's answer is needed: `invoke(null)` continues nothing and
 * returns the pause as it stands.
 */
import type { RunRecord, StoredInterrupt, TaskSpec } from "../checkpoint/types.ts";
import type { Execution } from "../engine/execution.ts";
import { Command, type ResumeCommand, type ResumeOptions } from "../graph/command.ts";
import type { GraphDefinition, RunSelectors, Selector } from "../graph/definition.ts";
import { interruptIdFor, type CheckpointId } from "../ids.ts";
import { encodeSlot } from "../keys.ts";
import type { ThreadSession } from "../thread/session.ts";

/** Parses selectors relative to a graph at namespace depth `base`. */
export function parseSelectors(selectors: readonly string[] | undefined, base: number): Selector[] {
  return (selectors ?? []).map((s) => ({
    segments: s.split("/").filter((part) => part.length > 0),
    base,
  }));
}

/** True when a task of `node` in `namespace` is selected. */
export function selects(
  selectors: readonly Selector[],
  namespace: readonly string[],
  node: string,
): boolean {
  if (selectors.length === 0) return false;
  const path = [...namespace, node];
  return selectors.some((selector) => {
    const relative = path.slice(selector.base);
    if (relative.length !== selector.segments.length) return false;
    return selector.segments.every((segment, i) => segment === "*" || segment === relative[i]);
  });
}

/** Selectors for a run: the graph's compile-time ones (at namespace depth `base`) plus the run's. */
export function selectorsFor(
  definition: GraphDefinition,
  run: RunRecord | null,
  base: number,
): RunSelectors {
  const rebase = (list: readonly Selector[]): Selector[] => list.map((s) => ({ ...s, base }));
  return {
    before: [
      ...rebase(definition.selectors.before),
      ...parseSelectors(run?.options?.interruptBefore, 0),
    ],
    after: [
      ...rebase(definition.selectors.after),
      ...parseSelectors(run?.options?.interruptAfter, 0),
    ],
  };
}

/** A `before`/`after` interrupt row for a task. */
export function staticInterrupt(
  exec: Execution,
  kind: "before" | "after",
  checkpointId: CheckpointId,
  task: TaskSpec,
): StoredInterrupt {
  return {
    id: interruptIdFor(exec.threadId, exec.namespace, task.id, encodeSlot({ kind }), 0),
    runId: exec.runId,
    threadId: exec.threadId,
    node: task.node,
    taskId: task.id,
    namespace: [...exec.namespace],
    order: 0,
    payload: { kind, node: task.node },
    kind,
    status: "pending",
    checkpointId,
    createdAt: new Date().toISOString(),
    stream: exec.stream,
    slot: encodeSlot({ kind }),
    revision: 0,
    path: [
      ...exec.path,
      { runId: exec.runId, graph: exec.graphName, node: task.node, taskId: task.id },
    ],
    graph: exec.graphName,
    tenant: exec.tenant,
    deadline: null,
    onTimeout: null,
    answerSchema: null,
  };
}

/**
 * The command that continues a thread paused only by static interrupts, or `null` when the
 * thread is not paused that way (nothing pending, or a dynamic interrupt pending).
 */
export async function staticPauseCommand(
  session: ThreadSession,
  options: Pick<ResumeOptions, "actor" | "requestId">,
): Promise<ResumeCommand | null> {
  const pending = await session.pending();
  if (pending.length === 0 || pending.some((i) => i.kind === "dynamic")) return null;
  return Command.resumeMap(
    Object.fromEntries(pending.map((i) => [i.id, null])),
    Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  );
}
