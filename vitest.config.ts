import { defineConfig } from "vitest/config";

// Tests run against `src` of every workspace package: the package exports point at TypeScript
// sources, so no build step stands between an edit and its test.
export default defineConfig({
  test: {
    include: [
      "packages/*/src/**/*.test.ts",
      "examples/*/src/**/*.test.ts",
      "bench/src/**/*.test.ts",
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
