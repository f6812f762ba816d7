/**
 * Static interrupt selectors (`interruptBefore` / `interruptAfter`): a node name, or a path into
 * subgraphs such as `"supervisor/research_agent/tools"`, where `*` matches one segment.
 */

/** A parsed selector, anchored at the namespace depth of the graph that declared it. */
export interface Selector {
  segments: string[];
  /** Namespace depth of the graph the selector is relative to. */
  base: number;
}

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
