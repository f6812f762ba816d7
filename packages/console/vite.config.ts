// Builds the console into dist/, which the server serves at `/`. JSX goes through esbuild's
// automatic runtime (no React plugin: fast refresh is not needed for a built, served console).
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "./",
  esbuild: { jsx: "automatic" },
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 800 },
  logLevel: "warn",
});
