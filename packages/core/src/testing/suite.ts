/**
 * The registration machinery of the conformance suite: one fresh store per spec, and known gaps
 * declared by the backend (not by the suite) turned into visible skips.
 */
import { describe, expect, it } from "vitest";
import type { Checkpointer, StoreCapability } from "../checkpoint/types.ts";

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
   * time it runs on. `needs` names the capabilities beyond the runtime store the spec calls:
   * a spec without any is part of the runtime suite, one with needs is part of each of those
   * capabilities' suites. The runtime suite's run on a runtime-only store proves a spec that
   * declares no needs uses nothing more.
   */
  spec(
    this: void,
    title: string,
    body: (saver: Checkpointer, time: SpecTime) => Promise<void>,
    needs?: readonly StoreCapability[],
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

/**
 * Which specs a suite takes, by the capabilities each needs, and the suite's title: every spec
 * (`checkpointer conformance`), the runtime's, or one capability's.
 */
export interface SuiteSelection {
  title: string;
  takes(needs: readonly StoreCapability[]): boolean;
}

/** Every spec: the whole conformance of a store that offers every capability. */
export const EVERY_SPEC: SuiteSelection = { title: "checkpointer conformance", takes: () => true };

/**
 * Registers the specs of `modules` that `selection` takes for `init` under one `describe`.
 * `init.create` may return a store with fewer members than {@link Checkpointer} when the
 * selection takes only specs that do not call them (the runtime suite on a runtime-only store).
 */
export function registerSuite(
  init: CheckpointerTestInitializer,
  modules: readonly SpecModule[],
  selection: SuiteSelection = EVERY_SPEC,
): void {
  const gaps = init.knownGaps ?? {};
  const names = new Set<string>();
  type Spec = { title: string; body: Parameters<SpecRegistry["spec"]>[1] };
  // Every spec's name counts for the gap check; only the selected ones run.
  const selected = modules.map((module) => {
    const specs: Spec[] = [];
    module.register({
      spec(title, body, needs = []) {
        names.add(`${module.concern}: ${title}`);
        if (selection.takes(needs)) specs.push({ title, body });
      },
    });
    return { concern: module.concern, specs };
  });
  describe(`${selection.title}: ${init.name}`, () => {
    for (const { concern, specs } of selected) {
      if (specs.length === 0) continue;
      describe(concern, () => {
        for (const { title, body } of specs) {
          const gap = gaps[`${concern}: ${title}`];
          if (gap !== undefined) {
            it.skip(`${title} [known gap of ${init.name}: ${gap}]`, () => {});
            continue;
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
        }
      });
    }
    it("declares known gaps only for specs that exist", () => {
      const unknown = Object.keys(gaps).filter((name) => !names.has(name));
      expect(unknown, "knownGaps names that match no spec").toEqual([]);
    });
  });
}
