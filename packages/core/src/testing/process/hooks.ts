/**
 * A checkpointer seen through hooks: a worker runs its graph on a proxy that calls a function
 * before or after a chosen store method, to stop or kill itself at an exact point of the
 * runtime's protocol (right after an answer commits, right after a step commits...).
 */
import type { Checkpointer, EveryCapabilityStore } from "../../checkpoint/types.ts";

type Method = {
  [K in keyof EveryCapabilityStore]-?: NonNullable<EveryCapabilityStore[K]> extends (
    ...args: never[]
  ) => unknown
    ? K
    : never;
}[keyof EveryCapabilityStore];

/** Hooks by store method name. `after` sees the resolved value; neither may change it. */
export interface SaverHooks {
  before?: Partial<Record<Method, (args: unknown[]) => void | Promise<void>>>;
  after?: Partial<Record<Method, (result: unknown, args: unknown[]) => void | Promise<void>>>;
}

/** A proxy of `saver` whose hooked methods call the hooks around the real call. */
export function hookSaver<T extends Checkpointer>(saver: T, hooks: SaverHooks): T {
  return new Proxy(saver, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      const before = hooks.before?.[property as Method];
      const after = hooks.after?.[property as Method];
      // Methods run on the real store: its private fields are not reachable through the proxy.
      if (!before && !after) return method.bind(target);
      return async (...args: unknown[]) => {
        await before?.(args);
        const result = await method.apply(target, args);
        await after?.(result, args);
        return result;
      };
    },
  });
}

/**
 * A proxy of `saver` that waits a random 0..`maxMs` before every store call, as a slow network
 * or a busy database would: racing processes then interleave at every point of the protocol,
 * not only at the few a quiet machine happens to produce.
 */
export function jitterSaver<T extends Checkpointer>(saver: T, maxMs: number): T {
  return new Proxy(saver, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      if (property === "close" || property === "serializer") return method.bind(target);
      return async (...args: unknown[]) => {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * maxMs));
        return method.apply(target, args);
      };
    },
  });
}
