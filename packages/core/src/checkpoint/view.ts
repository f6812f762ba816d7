/**
 * A view of a store with some members replaced: what runtime code writes through (the fencing
 * view) and what a server counts through (its metrics). Stores keep private fields, so a view
 * cannot be a prototype child: every other member is the store's own, bound to it.
 */
import type { Checkpointer } from "./types.ts";

/**
 * `store` with `overrides` in place of its members of the same names. A member the store does
 * not have (an optional one, such as `answerBatches`) stays absent from the view even when
 * overridden, so callers that test for it still see the store's capabilities.
 */
export function storeView(store: Checkpointer, overrides: Partial<Checkpointer>): Checkpointer {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property): unknown {
      if (Object.hasOwn(overrides, property))
        return Reflect.get(target, property, target) === undefined
          ? undefined
          : overrides[property as keyof Checkpointer];
      if (bound.has(property)) return bound.get(property);
      let value: unknown = Reflect.get(target, property, target);
      if (typeof value === "function") value = (value as () => unknown).bind(target);
      bound.set(property, value);
      return value;
    },
  });
}
