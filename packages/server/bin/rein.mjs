#!/usr/bin/env node
// The `rein` command. Packages ship TypeScript sources for now, so the CLI runs through tsx's
// loader; a graph module given to `--graphs` may be TypeScript too.
import { register } from "tsx/esm/api";

// `rein interrupts | head` closes stdout early: that is the reader's choice, not a failure.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});
register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
