/**
 * State channels: each key of a graph's state is a channel with a reducer that folds the updates
 * of one step into its value.
 */

/** How a channel folds updates. `append` channels are stored as deltas. */
export type ChannelKind = "lastValue" | "append" | "reducer" | "ephemeral";

/**
 * A channel definition. `Value` is what nodes read, `Update` what they write.
 * Build them with {@link lastValue}, {@link append}, {@link reducer} and {@link ephemeral}.
 */
export interface Channel<Value, Update = Value> {
  readonly kind: ChannelKind;
  /** Value before the first write. */
  initial(): Value;
  /** Folds one step's updates (in task order) into the value. */
  reduce(
    current: Value,
    updates: readonly Update[],
    writers: readonly string[],
    name: string,
  ): Value;
  /** Phantom field carrying the update type for inference. */
  readonly __update?: Update;
}

/** A state schema: channel name → channel. */
export type Schema = Record<string, Channel<unknown, unknown>>;

/** The state a node reads: channel name → value. */
export type StateOf<S extends Schema> = {
  [K in keyof S]: S[K] extends Channel<infer V, infer _U> ? V : never;
};

/** A partial update a node returns: channel name → update. */
export type UpdateOf<S extends Schema> = {
  [K in keyof S]?: S[K] extends Channel<unknown, infer U> ? U : never;
};

/** Raised by a last-value channel written twice in one step; the runtime adds the node names. */
export class DuplicateWriteError extends Error {
  constructor(
    readonly channel: string,
    readonly writers: readonly string[],
  ) {
    super(
      `Channel "${channel}" was written by ${writers.map((w) => `"${w}"`).join(" and ")} in the same step; a last-value channel takes one write per step — give it a reducer or write from one node.`,
    );
  }
}

/**
 * A channel that keeps the last value written. Two writes in one step are an error naming both
 * nodes: silently picking one would make the result depend on scheduling.
 */
export function lastValue<T>(initial?: () => T): Channel<T, T> {
  return {
    kind: "lastValue",
    initial: () => (initial ? initial() : (undefined as T)),
    reduce(current, updates, writers, name) {
      if (updates.length === 0) return current;
      if (updates.length > 1) throw new DuplicateWriteError(name, writers);
      return updates[0] as T;
    },
  };
}

/**
 * A list that nodes append to (messages). An update is one item or an array of items. Stored as
 * deltas: each step writes only what it appended.
 */
export function append<T>(): Channel<T[], T | T[]> {
  return {
    kind: "append",
    initial: () => [],
    reduce(current, updates) {
      if (updates.length === 0) return current;
      const next = current.slice();
      for (const update of updates) {
        if (Array.isArray(update)) next.push(...update);
        else next.push(update);
      }
      return next;
    },
  };
}

/** A channel folded with a custom reducer `(a, b) => c`, starting from `initial()`. */
export function reducer<T, U = T>(
  fn: (current: T, update: U) => T,
  initial: () => T,
): Channel<T, U> {
  return {
    kind: "reducer",
    initial,
    reduce(current, updates) {
      let value = current;
      for (const update of updates) value = fn(value, update);
      return value;
    },
  };
}

/**
 * A value visible only in the step after it was written, then cleared. Never stored as history
 * beyond that step.
 */
export function ephemeral<T>(): Channel<T | undefined, T> {
  return {
    kind: "ephemeral",
    initial: () => undefined,
    reduce(_current, updates, writers, name) {
      if (updates.length === 0) return undefined;
      if (updates.length > 1) throw new DuplicateWriteError(name, writers);
      return updates[0];
    },
  };
}

/** Items appended by an update to an append channel (for delta storage). */
export function appendedItems(updates: readonly unknown[]): unknown[] {
  const items: unknown[] = [];
  for (const update of updates) {
    if (Array.isArray(update)) items.push(...(update as unknown[]));
    else items.push(update);
  }
  return items;
}
