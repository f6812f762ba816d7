/**
 * Harness of the runtime contract suite: each contract is an ordinary vitest `it` whose body gets
 * a fresh store of the backend under test, so the same behaviour is proven on memory, SQLite and
 * Postgres, and `it.only` or an editor's test runner works on any one of them.
 */
import type { Checkpointer, StreamEvent } from "../../index.ts";

/** How the runtime contract suite gets stores of one backend. */
export interface RuntimeTestInitializer {
  /** Backend name shown in test titles. */
  name: string;
  /** A fresh, empty store. */
  create(): Promise<Checkpointer>;
  /** Tears a store down (drop its schema, delete its file). */
  destroy(saver: Checkpointer): Promise<void>;
}

/** What a contract file gets from the backend under test. */
export interface RuntimeEnv {
  /** Backend name, as shown in test titles. */
  readonly name: string;
  /**
   * A test body that runs `body` against a fresh store and destroys the store afterwards, pass or
   * fail: `it("title", env.withStore(async (saver) => { ... }))`.
   */
  withStore(body: (saver: Checkpointer) => Promise<void>): () => Promise<void>;
}

/** The {@link RuntimeEnv} of one backend. */
export function runtimeEnv(init: RuntimeTestInitializer): RuntimeEnv {
  return {
    name: init.name,
    withStore: (body) => async () => {
      const saver = await init.create();
      try {
        await body(saver);
      } finally {
        await init.destroy(saver);
      }
    },
  };
}

/** A counter of node executions by key. */
export class Counter {
  private readonly counts = new Map<string, number>();
  /** Counts one execution of `key`. */
  hit(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  /** Executions of `key` so far. */
  of(key: string): number {
    return this.counts.get(key) ?? 0;
  }
  /** Executions of all keys. */
  total(): number {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }
}

/** A unique thread id for a test. */
export function threadName(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * The error a call fails with, whether it throws or rejects. A call that succeeds yields an
 * `Error("expected a rejection")`, which no `toBeInstanceOf` of a specific error class accepts.
 */
export async function rejection(
  call: Promise<unknown> | (() => Promise<unknown>),
): Promise<unknown> {
  const running = typeof call === "function" ? Promise.resolve().then(call) : call;
  return running.then(
    () => new Error("expected a rejection"),
    (error: unknown) => error,
  );
}

/** Every event of a stream, in order. */
export async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}
