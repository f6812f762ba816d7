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
  /**
   * A fresh, empty store. Called once per spec. When {@link honoursClock} is set, build the
   * store on `clock` (the stores' `clock` option): the lease specs then move it forward instead
   * of sleeping past a lease's TTL.
   */
  create(clock: () => Date): Promise<Checkpointer>;
  /**
   * Whether the store made by `create` takes lease times from the `clock` it was given. Leave it
   * unset for a store that uses the database's clock (Postgres), and the lease specs sleep.
   */
  honoursClock?: boolean;
  /** Disposes of a store made by `create()` (close it, drop its schema or file). */
  destroy(saver: Checkpointer): Promise<void>;
  /**
   * Specs this backend is known not to pass, by spec name (`"<concern>: <title>"`), with the
   * reason. They are skipped with the reason in their title. A name that matches no spec fails
   * the suite, so a renamed spec never silently un-skips or stays skipped.
   */
  knownGaps?: Record<string, string>;
}

/** How a spec lets time pass for the store it was given. */
export interface SpecTime {
  /**
   * Lets `ms` pass for the store's leases: moves the store's clock forward when the backend
   * honours one ({@link CheckpointerTestInitializer.honoursClock}), else sleeps that long.
   */
  advance(this: void, ms: number): Promise<void>;
}

/** What a spec file gets to register its specs with. */
export interface SpecRegistry {
  /**
   * Registers one spec; `body` receives a fresh store that is destroyed afterwards, and the
   * time it runs on.
   */
  spec(
    this: void,
    title: string,
    body: (saver: Checkpointer, time: SpecTime) => Promise<void>,
  ): void;
}

/**
 * A clock that runs with the system clock plus the time `advance` added: a store on it sees a
 * lease expire at once, and stamps still move forward between calls as they do in production.
 */
function testTime(honoured: boolean): { clock: () => Date; time: SpecTime } {
  let ahead = 0;
  const clock = () => new Date(Date.now() + ahead);
  const advance = (ms: number): Promise<void> => {
    if (!honoured) return new Promise((resolve) => setTimeout(resolve, ms));
    ahead += ms;
    return Promise.resolve();
  };
  return { clock, time: { advance } };
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
              const { clock, time } = testTime(init.honoursClock === true);
              const saver = await init.create(clock);
              try {
                await body(saver, time);
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
