/**
 * A view of a store with some members replaced: what runtime code writes through (the fencing
 * view) and what a server counts through (its metrics). Stores keep private fields, so a view
 * cannot be a prototype child: every other member is the store's own, bound to it.
 */
import type { EveryCapabilityStore, RuntimeStore } from "./types.ts";

/**
 * `store` with `overrides` in place of its members of the same names. A member the store does
 * not have (one of a capability it lacks, such as `answerBatches`) stays absent from the view even when
 * overridden, and its `capabilities` record is the store's own.
 */
export function storeView<S extends RuntimeStore>(
  store: S,
  overrides: Partial<EveryCapabilityStore>,
): S {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property): unknown {
      if (Object.hasOwn(overrides, property))
        return Reflect.get(target, property, target) === undefined
          ? undefined
          : overrides[property as keyof EveryCapabilityStore];
      if (bound.has(property)) return bound.get(property);
      let value: unknown = Reflect.get(target, property, target);
      if (typeof value === "function") value = (value as () => unknown).bind(target);
      bound.set(property, value);
      return value;
    },
  });
}
