/**
 * The graphs module (`--graphs`) of the joined-stream restart suite: the six-step `chain` graph,
 * kept out of the shared test graphs so the graph lists other suites assert stay as they are.
 */
import type { GraphFactory } from "../registry.ts";
import { chain } from "./graphs.ts";

/** The graphs by name, as a `--graphs` module exports them. */
export const graphs: Record<string, GraphFactory> = { chain };
