// Builds the console into dist/, which the server serves at `/`. JSX goes through esbuild's
// automatic runtime (no React plugin: fast refresh is not needed for a built, served console).
import { defaultClientConditions, defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  // `@rein/client` is bundled from its sources (the repository's "@rein/source" export condition,
  // docs/packaging.md): a fresh clone builds the console before any package is built.
  resolve: { conditions: ["@rein/source", ...defaultClientConditions] },
  base: "./",
  esbuild: { jsx: "automatic" },
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 800 },
  logLevel: "warn",
});
