/**
 * Harness of the runtime contract suite: each contract runs against a fresh store of the backend
 * under test, so the same behaviour is proven on memory, SQLite and Postgres.
 */
import { it } from "vitest";
import type { Checkpointer } from "../../checkpoint/types.ts";

/** How the runtime contract suite gets stores of one backend. */
export interface RuntimeTestInitializer {
  /** Backend name shown in test titles. */
  name: string;
  /** A fresh, empty store. */
  create(): Promise<Checkpointer>;
  /** Tears a store down (drop its schema, delete its file). */
  destroy(saver: Checkpointer): Promise<void>;
}

/** A contract: a title and a body that gets a fresh store. */
export type Contract = readonly [title: string, body: (saver: Checkpointer) => Promise<void>];

/** Registers contracts as vitest tests, each with a fresh store. */
export function registerContracts(
  init: RuntimeTestInitializer,
  contracts: readonly Contract[],
  timeout?: number,
): void {
  for (const [title, body] of contracts) {
    it(
      title,
      async () => {
        const saver = await init.create();
        try {
          await body(saver);
        } finally {
          await init.destroy(saver);
        }
      },
      timeout,
    );
  }
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
