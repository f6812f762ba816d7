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
import { Command, type ResumeCommand, type ResumeOptions } from "../graph/command.ts";
import type { GraphDefinition, RunSelectors, Selector } from "../graph/definition.ts";
import { interruptIdFor, type CheckpointId } from "../ids.ts";
import { encodeSlot } from "../keys.ts";
import type { RunPlace } from "./scope.ts";

/** Parses selectors relative to a graph at namespace depth `base`. */
export function parseSelectors(selectors: readonly string[] | undefined, base: number): Selector[] {
  return (selectors ?? []).map((s) => ({
    segments: s.split("/").filter((part) => part.length > 0),
    base,
  }));
}

/** Where a selector left the known structure of a graph: the graph, its nodes, the segment. */
export interface SelectorMiss {
  graph: string;
  nodes: string[];
  segment: string;
}

/**
 * Why `segments` can select no task of `definition`, or null when it can. A segment must name a
 * node of the graph it reaches (or be `*`); below a subgraph node the path goes on in the child
 * graph's nodes. Below a function node the structure is not known (its code may invoke a graph,
 * as `subAgent()` does), so any rest of the path is accepted.
 */
function missOf(definition: GraphDefinition, segments: readonly string[]): SelectorMiss | null {
  const [segment = "", ...rest] = segments;
  const nodes = [...definition.nodes.values()];
  const reached = segment === "*" ? nodes : nodes.filter((node) => node.name === segment);
  if (reached.length === 0)
    return { graph: definition.name, nodes: nodes.map((node) => node.name), segment };
  if (rest.length === 0) return null;
  let miss: SelectorMiss | null = null;
  for (const node of reached) {
    if (!node.child) return null;
    const below = missOf(node.child, rest);
    if (!below) return null;
    miss ??= below;
  }
  return miss;
}

/**
 * Refuses selectors that can select nothing in `definition` (a typo such as `"wiat"` would
 * otherwise let the run go on without the stop the caller asked for).
 *
 * @param option the option the selectors came from, named in the error.
 * @param refuse builds the error: `InvalidGraphError` at compile time, `InvalidInputError` per run.
 */
export function checkSelectors(
  definition: GraphDefinition,
  selectors: readonly unknown[] | undefined,
  option: "interruptBefore" | "interruptAfter",
  refuse: (message: string, details: Record<string, unknown>) => Error,
): void {
  for (const selector of selectors ?? []) {
    if (typeof selector !== "string")
      throw refuse(`${option} takes node names or paths (strings), not ${typeof selector}.`, {
        option,
      });
    const segments = selector.split("/").filter((part) => part.length > 0);
    const miss = missOf(definition, segments);
    if (!miss) continue;
    const at = segments.length > 1 ? ` (at "${miss.segment.slice(0, 100)}")` : "";
    throw refuse(
      `${option} selector "${selector.slice(0, 200)}" names no node of graph "${miss.graph}"${at}; its nodes are: ${miss.nodes.join(", ")}. Use a node name, a path into subgraphs ("agent/tools"), or * for one segment.`,
      { option, selector, ...miss },
    );
  }
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
  exec: RunPlace,
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
    createdAt: exec.clock().toISOString(),
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
  session: { pending(): Promise<readonly StoredInterrupt[]> },
  options: Pick<ResumeOptions, "actor" | "requestId">,
): Promise<ResumeCommand | null> {
  const pending = await session.pending();
  if (pending.length === 0 || pending.some((i) => i.kind === "dynamic")) return null;
  return Command.resumeMap(
    Object.fromEntries(pending.map((i) => [i.id, null])),
    Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  );
}
