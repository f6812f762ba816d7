/**
 * The recovery sweep: root runs that a crashed or cut-off process left `running` are continued
 * from their last checkpoint, or marked failed. A run whose lease is still held is left alone.
 */
import { requireCapability } from "../checkpoint/capabilities.ts";
import type { RunRecord, RuntimeStore } from "../checkpoint/types.ts";
import { silentSink } from "../engine/events.ts";
import { runRoot } from "../engine/root.ts";
import { ThreadBusyError } from "../errors.ts";
import type { GraphDefinition } from "../graph/definition.ts";
import type { RunId } from "../ids.ts";
import type { LeaseSettings } from "../graph/options.ts";
import { openSession } from "../thread/session.ts";

/** The actor recovered runs are continued under. */
const RECOVERY = "system:recovery";

/** Options of {@link recoverRuns}. */
export interface RecoverOptions {
  /** `"continue"` (default) the runs from their last checkpoint, or `"fail"` them. */
  action?: "continue" | "fail";
  /** At most this many runs (default 1000). */
  limit?: number;
}

/**
 * Continues (or fails) `definition`'s root runs left `running`, skipping those whose thread is
 * busy: nothing committed is lost and no finished task runs again.
 *
 * @returns the run ids continued (or failed) and those skipped because their thread was busy.
 */
export async function recoverRuns(
  definition: GraphDefinition,
  store: RuntimeStore,
  lease: LeaseSettings,
  options: RecoverOptions,
): Promise<{ recovered: RunId[]; busy: RunId[] }> {
  const recovered: RunId[] = [];
  const busy: RunId[] = [];
  let cursor: string | null = null;
  let seen = 0;
  do {
    const page: { items: RunRecord[]; nextCursor: string | null } = await requireCapability(
      store,
      "runRecovery",
      "the recovery sweep",
    ).listRunsByStatus({ status: "running", rootOnly: true, cursor });
    cursor = page.nextCursor;
    for (const run of page.items) {
      if (run.graph !== definition.name) continue;
      if (++seen > (options.limit ?? 1000)) return { recovered, busy };
      try {
        // No waiting: a held lease means a live process is running it.
        const settings = { ...lease, waitMs: 0 };
        await openSession(store, run.threadId, settings, RECOVERY, async (session) => {
          const current = await session.run(run.runId);
          if (current?.status !== "running") return;
          if (options.action === "fail")
            await session.putRun(current, {
              status: "error",
              error: {
                name: "RecoveredRunError",
                message: "The process running this run stopped; the recovery sweep failed it.",
              },
            });
          else
            await runRoot(
              definition,
              session,
              null,
              { threadId: run.threadId, actor: RECOVERY },
              silentSink,
            );
          recovered.push(run.runId);
        });
      } catch (error) {
        if (!(error instanceof ThreadBusyError)) throw error;
        busy.push(run.runId);
      }
    }
  } while (cursor);
  return { recovered, busy };
}
