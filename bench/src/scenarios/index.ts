/**
 * Every scenario, in the order the runner runs them and RESULTS.md lists them.
 */
import type { Scenario } from "../harness/scenario.ts";
import { parallelInterrupts } from "./parallel-interrupts.ts";
import { pauseResume } from "./pause-resume.ts";
import { pausedThreads } from "./paused-threads.ts";
import { serverResumes } from "./server-resumes.ts";
import { storageGrowth } from "./storage-growth.ts";
import { superstep } from "./superstep.ts";
import { targetedResume } from "./targeted-resume.ts";

/** All scenarios, in order. */
export const SCENARIOS: readonly Scenario[] = [
  superstep,
  pauseResume,
  parallelInterrupts,
  targetedResume,
  storageGrowth,
  pausedThreads,
  serverResumes,
];
