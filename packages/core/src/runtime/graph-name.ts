/**
 * The default name of a graph compiled without `name`. Interrupts, runs and deadline timers are
 * scoped by graph name, so two different unnamed graphs must never share one: the default is
 * derived from the definition — channel names and kinds, node names and code, edges, routers and
 * subgraphs — so the same definition gets the same name in every process (its timer picks up its
 * interrupts after a restart) while different definitions get different names.
 */
import { createHash } from "node:crypto";
import type { GraphShape } from "../graph/state-graph.ts";

/** `graph-<12 characters of a hash of the definition>`. */
export function defaultGraphName(shape: GraphShape): string {
  const definition = {
    channels: Object.entries(shape.schema).map(([name, channel]) => [name, channel.kind]),
    nodes: [...shape.nodes.values()].map((node) => [
      node.name,
      typeof node.run === "function" ? node.run.toString() : { subgraph: node.run.name },
    ]),
    edges: [...shape.edges.entries()],
    branches: [...shape.branches.entries()].map(([from, list]) =>
      list.map((branch) => [from, branch.router.toString(), branch.pathMap]),
    ),
  };
  const hash = createHash("sha256").update(JSON.stringify(definition)).digest("base64url");
  return `graph-${hash.slice(0, 12)}`;
}
