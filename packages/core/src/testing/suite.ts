/**
 * The registration machinery of the conformance suite: one fresh store per spec, and known gaps
 * declared by the backend (not by the suite) turned into visible skips.
 */
import { describe, expect, it } from "vitest";
import type { Checkpointer } from "../checkpoint/types.ts";

/**
 * How a backend plugs into {@link runCheckpointerConformance}: how to make a fresh, empty store
 * and how to dispose of it.
 */
export interface CheckpointerTestInitializer {
  /** Name shown in the test report (`"sqlite"`, `"postgres"`). */
  name: string;
  /** A fresh, empty store. Called once per spec. */
  create(): Promise<Checkpointer>;
  /** Disposes of a store made by `create()` (close it, drop its schema or file). */
  destroy(saver: Checkpointer): Promise<void>;
  /**
   * Specs this backend is known not to pass, by spec name (`"<concern>: <title>"`), with the
   * reason. They are skipped with the reason in their title. A name that matches no spec fails
   * the suite, so a renamed spec never silently un-skips or stays skipped.
   */
  knownGaps?: Record<string, string>;
}

/** What a spec file gets to register its specs with. */
export interface SpecRegistry {
  /** Registers one spec; `body` receives a fresh store that is destroyed afterwards. */
  spec(this: void, title: string, body: (saver: Checkpointer) => Promise<void>): void;
}

/** A spec file: its concern (the `describe` name) and its registration function. */
export interface SpecModule {
  concern: string;
  register(registry: SpecRegistry): void;
}

/** Registers every spec of `modules` for `init` under one `describe`. */
export function registerSuite(
  init: CheckpointerTestInitializer,
  modules: readonly SpecModule[],
): void {
  const gaps = init.knownGaps ?? {};
  const names = new Set<string>();
  describe(`checkpointer conformance: ${init.name}`, () => {
    for (const module of modules) {
      describe(module.concern, () => {
        module.register({
          spec(title, body) {
            const name = `${module.concern}: ${title}`;
            names.add(name);
            const gap = gaps[name];
            if (gap !== undefined) {
              it.skip(`${title} [known gap of ${init.name}: ${gap}]`, () => {});
              return;
            }
            it(title, async () => {
              const saver = await init.create();
              try {
                await body(saver);
              } finally {
                await init.destroy(saver);
              }
            });
          },
        });
      });
    }
    it("declares known gaps only for specs that exist", () => {
      const unknown = Object.keys(gaps).filter((name) => !names.has(name));
      expect(unknown, "knownGaps names that match no spec").toEqual([]);
    });
  });
}
