/**
 * The graph builder. `new StateGraph(schema)` collects nodes and edges; `compile()` validates the
 * shape (so misuse fails at build time, not mid-run) and returns a runnable {@link CompiledGraph}.
 */
import type { Schema, StateOf } from "../channels.ts";
import { InvalidGraphError } from "../errors.ts";
import { CompiledGraph } from "./compiled.ts";
import { END, START, type DraftGraph, type DraftNode } from "../graph/definition.ts";
import type { NodeFn, NodeOptions, Router } from "../graph/node.ts";
import type { CompileOptions } from "../graph/options.ts";

export { END, START } from "../graph/definition.ts";
export type { NodeFn, NodeOptions, NodeReturn, RetryPolicy, Router } from "../graph/node.ts";

const RESERVED = new Set([START, END]);

/**
 * Builds a graph over a typed state schema.
 *
 * @example
 * const graph = new StateGraph({ messages: append<string>(), approved: lastValue<boolean>() })
 *   .addNode("ask", async (_s, ctx) => ({ approved: ctx.interrupt<boolean>({ question: "Send?" }) }))
 *   .addEdge(START, "ask")
 *   .compile({ checkpointer: new MemorySaver() });
 */
export class StateGraph<S extends Schema> {
  private readonly shape: DraftGraph;

  constructor(schema: S) {
    this.shape = { schema, nodes: new Map(), edges: new Map(), branches: new Map() };
  }

  /** Adds a node: a function, or a compiled graph that runs as a child run (a sub-agent). */
  addNode<Input = StateOf<S>>(
    name: string,
    run: NodeFn<S, Input> | CompiledGraph<Schema>,
    options: NodeOptions = {},
  ): this {
    if (RESERVED.has(name))
      throw new InvalidGraphError(`"${name}" is reserved; pick another node name.`, { node: name });
    if (name.includes("/"))
      throw new InvalidGraphError(
        `Node name "${name}" must not contain "/" (it separates namespace segments).`,
        { node: name },
      );
    if (name in this.shape.schema)
      throw new InvalidGraphError(
        `Node "${name}" has the name of a state channel; rename one of them.`,
        { node: name },
      );
    if (this.shape.nodes.has(name))
      throw new InvalidGraphError(`Node "${name}" is already defined.`, { node: name });
    this.shape.nodes.set(name, { name, run: run as DraftNode["run"], options });
    return this;
  }

  /** Adds an edge: after `from` runs, `to` runs in the next step. */
  addEdge(from: string, to: string): this {
    if (from === END) throw new InvalidGraphError("END has no outgoing edges.");
    if (to === START) throw new InvalidGraphError("START has no incoming edges.");
    const targets = this.shape.edges.get(from) ?? [];
    if (!targets.includes(to)) targets.push(to);
    this.shape.edges.set(from, targets);
    return this;
  }

  /**
   * Adds a conditional edge: after `from` runs, `router(state)` picks the next node(s) or Sends.
   * Pass `pathMap` (result → node, or the list of possible nodes) so reachability can be checked.
   */
  addConditionalEdges(
    from: string,
    router: Router<S>,
    pathMap?: Record<string, string> | readonly string[],
  ): this {
    if (from === END) throw new InvalidGraphError("END has no outgoing edges.");
    const map =
      pathMap === undefined
        ? null
        : Array.isArray(pathMap)
          ? Object.fromEntries(pathMap.map((n: string) => [n, n]))
          : (pathMap as Record<string, string>);
    const list = this.shape.branches.get(from) ?? [];
    list.push({ router: router as Router<Schema>, pathMap: map });
    this.shape.branches.set(from, list);
    return this;
  }

  /**
   * Validates the graph and returns a runnable graph.
   *
   * @throws InvalidGraphError for an edge naming an unknown node, a node no path reaches, a
   *   graph without an entry edge, or an `interruptBefore` / `interruptAfter` selector that
   *   names no node (the error lists the nodes).
   */
  compile(options: CompileOptions = {}): CompiledGraph<S> {
    validate(this.shape);
    return new CompiledGraph<S>(this.shape, options);
  }
}

function validate(shape: DraftGraph): void {
  const known = (name: string): boolean => shape.nodes.has(name) || name === END || name === START;
  for (const [from, targets] of shape.edges) {
    if (!known(from))
      throw new InvalidGraphError(`Edge from unknown node "${from}".`, { node: from });
    for (const to of targets)
      if (!known(to))
        throw new InvalidGraphError(`Edge from "${from}" to unknown node "${to}".`, { from, to });
  }
  for (const [from, branches] of shape.branches) {
    if (!known(from))
      throw new InvalidGraphError(`Conditional edge from unknown node "${from}".`, { node: from });
    for (const branch of branches)
      for (const to of Object.values(branch.pathMap ?? {}))
        if (!known(to))
          throw new InvalidGraphError(
            `Conditional edge from "${from}" maps to unknown node "${to}".`,
            { from, to },
          );
  }
  for (const node of shape.nodes.values())
    for (const to of node.options.ends ?? [])
      if (!known(to))
        throw new InvalidGraphError(
          `Node "${node.name}" declares goto target "${to}", which is not a node.`,
          { from: node.name, to },
        );
  if (!shape.edges.has(START) && !shape.branches.has(START))
    throw new InvalidGraphError("The graph has no entry: add an edge from START.", {});
  const reached = reachable(shape);
  for (const name of shape.nodes.keys())
    if (!reached.has(name))
      throw new InvalidGraphError(
        `Node "${name}" is unreachable from START; connect it with an edge or remove it.`,
        { node: name },
      );
}

function successors(shape: DraftGraph, from: string): string[] | "any" {
  const out = [...(shape.edges.get(from) ?? [])];
  for (const branch of shape.branches.get(from) ?? []) {
    // A router without a path map may return any node: assume it can.
    if (!branch.pathMap) return "any";
    out.push(...Object.values(branch.pathMap));
  }
  // A node that reaches others only through Command({ goto }) declares them in `ends`.
  out.push(...(shape.nodes.get(from)?.options.ends ?? []));
  return out;
}

function reachable(shape: DraftGraph): Set<string> {
  const seen = new Set<string>();
  const queue = [START];
  let anyFrom = false;
  while (queue.length > 0) {
    const current = queue.pop() as string;
    const next = successors(shape, current);
    if (next === "any") {
      anyFrom = true;
      continue;
    }
    for (const n of next)
      if (!seen.has(n)) {
        seen.add(n);
        queue.push(n);
      }
  }
  if (anyFrom) for (const name of shape.nodes.keys()) seen.add(name);
  return seen;
}
