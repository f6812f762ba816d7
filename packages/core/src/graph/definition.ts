/**
 * The plain-data definition of a graph: what `compile()` fixes once and every call reads. The
 * builder fills a {@link DraftGraph}; the compiled graph turns it into a {@link GraphDefinition},
 * in which a subgraph node is an ordinary node function. Nothing here runs anything.
 */
import type { Schema } from "../channels.ts";
import type { ApproversSpec, NodeFn, NodeOptions, Router } from "./node.ts";

/** Entry pseudo-node. */
export const START = "__start__";
/** Exit pseudo-node. */
export const END = "__end__";

/** Whether the determinism guard compares re-run interrupt payloads with the recorded ones. */
export type DeterminismMode = "strict" | "off";

/** A graph node of a definition: always a function (a subgraph is wrapped into one). */
export interface NodeSpec {
  name: string;
  run: NodeFn<Schema, unknown>;
  options: NodeOptions;
  /** Name of the compiled graph this node runs as a child run, when it is a subgraph node. */
  subgraph?: string;
  /** That graph's definition: static selectors are checked against the nodes inside it. */
  child?: GraphDefinition;
}

/** A conditional edge as stored by the builder. */
export interface BranchSpec {
  router: Router<Schema>;
  /** Maps router results to node names; when absent the router returns node names directly. */
  pathMap: Record<string, string> | null;
}

/** What the engine needs of a compiled graph used as a node. */
export interface Subgraph {
  readonly definition: GraphDefinition;
}

/** A node as the builder collects it: a function, or a compiled graph run as a child run. */
export interface DraftNode {
  name: string;
  run: NodeFn<Schema, unknown> | Subgraph;
  options: NodeOptions;
}

/** The builder's validated shape of a graph, before subgraph nodes are wrapped. */
export interface DraftGraph {
  schema: Schema;
  nodes: Map<string, DraftNode>;
  edges: Map<string, string[]>;
  branches: Map<string, BranchSpec[]>;
}

/** A static interrupt selector, anchored at the namespace depth of the graph that declared it. */
export interface Selector {
  segments: string[];
  /** Namespace depth of the graph the selector is relative to. */
  base: number;
}

/** Static interrupt selectors in force for a run. */
export interface RunSelectors {
  before: Selector[];
  after: Selector[];
}

/** A compiled graph's definition: fixed at compile time, shared by every call. */
export interface GraphDefinition {
  /** The graph's name; interrupts, runs and deadline timers are scoped by it. */
  name: string;
  schema: Schema;
  nodes: ReadonlyMap<string, NodeSpec>;
  edges: ReadonlyMap<string, string[]>;
  branches: ReadonlyMap<string, BranchSpec[]>;
  determinism: DeterminismMode;
  /** Maximum supersteps per call. */
  recursionLimit: number;
  /** Compile-time `interruptBefore` / `interruptAfter`, relative to this graph (base 0). */
  selectors: RunSelectors;
  /**
   * Approvers of the questions this graph's runs raise without their own (a deployment's
   * default per graph, see `CompiledGraph.withApprovers`).
   */
  approvers?: ApproversSpec | undefined;
}
