/**
 * The default name of a graph compiled without `name`. Interrupts, runs and deadline timers are
 * scoped by graph name, so two different unnamed graphs must never share one: the default is
 * derived from the definition — channel names and kinds, node names and code, edges, routers and
 * subgraphs — so the same definition gets the same name in every process (its timer picks up its
 * interrupts after a restart) while different definitions get different names.
 */
import { createHash } from "node:crypto";
import type { BranchSpec, NodeSpec } from "./definition.ts";
import type { Schema } from "../channels.ts";

/** `graph-<12 characters of a hash of the definition>`. */
export function defaultGraphName(shape: {
  schema: Schema;
  nodes: ReadonlyMap<string, NodeSpec>;
  edges: ReadonlyMap<string, string[]>;
  branches: ReadonlyMap<string, BranchSpec[]>;
}): string {
  const definition = {
    channels: Object.entries(shape.schema).map(([name, channel]) => [name, channel.kind]),
    nodes: [...shape.nodes.values()].map((node) => [
      node.name,
      node.subgraph === undefined ? node.run.toString() : { subgraph: node.subgraph },
    ]),
    edges: [...shape.edges.entries()],
    branches: [...shape.branches.entries()].map(([from, list]) =>
      list.map((branch) => [from, branch.router.toString(), branch.pathMap]),
    ),
  };
  const hash = createHash("sha256").update(JSON.stringify(definition)).digest("base64url");
  return `graph-${hash.slice(0, 12)}`;
}
