/**
 * The graphs module (`--graphs`) of the rolling-deploy suites: the two-step `handover` graph.
 */
import type { GraphFactory } from "../registry.ts";
import { handover } from "./graphs.ts";

/** The graphs by name, as a `--graphs` module exports them. */
export const graphs: Record<string, GraphFactory> = { handover };
