import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { defaultServerConditions } from "vite";
import { configDefaults, defineConfig } from "vitest/config";

// Inside the repository, tests run against `src` of every workspace package: each export map
// lists a "@rein/source" condition ahead of the built `dist` files (docs/packaging.md), and this
// config turns it on, so no build step stands between an edit and its test. Processes the tests
// spawn (`node --import tsx ...`) get the same condition through NODE_OPTIONS.
const source = "@rein/source";

/**
 * The model adapters declare two majors of their client (`ai` and `openai` `^6 || ^7`,
 * `@langchain/core` `^1`): their tests run once against the version each adapter installs (the
 * newest 6.x / 1.x), and once more against the other end of the range, installed beside it under
 * an npm alias (each adapter's devDependencies) and swapped in for every import of the client
 * by the adapter's source and tests alike.
 */
const clientMajors = [
  { name: "ai@7", dir: "packages/ai-sdk", from: "ai", to: "ai-v7" },
  { name: "openai@7", dir: "packages/openai", from: "openai", to: "openai-v7" },
  {
    name: "@langchain/core@1.0",
    dir: "packages/langchain",
    from: "@langchain/core",
    to: "langchain-core-v1-0",
  },
];

/**
 * The deployment fault suites: throwaway Postgres clusters stopped, failed over and put behind
 * PgBouncer, network namespaces, signals to whole process trees. They time takeovers and restarts
 * across real processes, so they run last, one file at a time, with the machine to themselves.
 * Every other file runs in parallel: most of their time is spent waiting on sockets, child
 * processes and Postgres, not on a core (at least two files at once, even on a 2-core machine).
 */
const serialSuites = [
  "packages/server/src/scale/{pgbouncer,failover,partition,restarts,rolling,joined-restart,faults,takeover-reconnect}.int.test.ts",
  "packages/server/src/cli/signals.int.test.ts",
  "packages/server/src/thread-claims-kill.int.test.ts",
  "packages/postgres/src/{failover,outage,crash-loop}.int.test.ts",
];
const parallelWorkers = Math.max(2, availableParallelism() - 1);

/**
 * Files left out of this run, space-separated globs (`scripts/test-node-versions.sh` leaves out the
 * fault and browser suites on the other Node majors). An environment variable, not `--exclude`:
 * a project's own `exclude` replaces the command line's.
 */
const leftOut = (process.env["REIN_TEST_EXCLUDE"] ?? "").split(/\s+/).filter(Boolean);

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

export default defineConfig({
  // Without "module": a dependency whose "module" build uses extensionless imports (as
  // @opentelemetry/api's does) resolves there and fails to load under Node's own ESM loader.
  ssr: {
    resolve: {
      conditions: [source, ...defaultServerConditions.filter((c) => c !== "module")],
    },
  },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "rein",
          include: [
            "packages/*/src/**/*.test.ts",
            "examples/*/src/**/*.test.ts",
            // The bench has its own install (scripts/ensure-bench.mjs); its tests run once it
            // is installed (`npm run test:bench` installs it first).
            ...(existsSync("bench/node_modules") ? ["bench/src/**/*.test.ts"] : []),
            "tests/**/*.test.ts",
          ],
          exclude: [...configDefaults.exclude, ...serialSuites, ...leftOut],
          maxWorkers: parallelWorkers,
        },
      },
      {
        extends: true,
        test: {
          name: "rein-serial",
          include: serialSuites,
          exclude: [...configDefaults.exclude, ...leftOut],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
      ...clientMajors.map((major) => ({
        extends: true,
        resolve: {
          alias: [
            { find: new RegExp(`^${escape(major.from)}$`), replacement: major.to },
            { find: new RegExp(`^${escape(major.from)}/(.*)$`), replacement: `${major.to}/$1` },
          ],
        },
        test: {
          name: major.name,
          include: [`${major.dir}/src/**/*.test.ts`],
          exclude: [...configDefaults.exclude, ...leftOut],
          maxWorkers: parallelWorkers,
          // The adapter's tests check that this is the client they were handed.
          env: { REIN_CLIENT_UNDER_TEST: major.name },
        },
      })),
    ],
    env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --conditions=${source}`.trim() },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
