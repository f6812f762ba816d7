import { existsSync } from "node:fs";
import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

// Inside the repository, tests run against `src` of every workspace package: each export map
// lists a "@rein/source" condition ahead of the built `dist` files (docs/packaging.md), and this
// config turns it on, so no build step stands between an edit and its test. Processes the tests
// spawn (`node --import tsx ...`) get the same condition through NODE_OPTIONS.
const source = "@rein/source";

export default defineConfig({
  // Without "module": a dependency whose "module" build uses extensionless imports (as
  // @opentelemetry/api's does) resolves there and fails to load under Node's own ESM loader.
  ssr: {
    resolve: {
      conditions: [source, ...defaultServerConditions.filter((c) => c !== "module")],
    },
  },
  test: {
    include: [
      "packages/*/src/**/*.test.ts",
      "examples/*/src/**/*.test.ts",
      // The bench has its own install (scripts/ensure-bench.mjs); its tests run once it is
      // installed (`npm run test:bench` installs it first).
      ...(existsSync("bench/node_modules") ? ["bench/src/**/*.test.ts"] : []),
      "tests/**/*.test.ts",
    ],
    env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --conditions=${source}`.trim() },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
