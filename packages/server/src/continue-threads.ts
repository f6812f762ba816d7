/**
 * What follows a decision over many threads, wherever it was made (`POST /interrupts/decisions`,
 * a Slack click): each answered thread's run continues in the background.
 */
import type { BulkDecided } from "@rein/core";
import type { Principal } from "./auth.ts";
import type { ServerContext } from "./context.ts";
import { launch } from "./launch.ts";
import { threadIdOf } from "./ids.ts";

/**
 * Continues the run of each thread a decision answered in (in the background); a thread that
 * only gained approvals gets a change notice. Also what a decision from Slack does after it.
 */
export async function continueThreads(
  ctx: ServerContext,
  principal: Principal,
  decided: readonly BulkDecided[],
): Promise<void> {
  const answered = new Set(decided.filter((d) => d.status === "answered").map((d) => d.threadId));
  for (const threadId of new Set(decided.map((d) => d.threadId))) {
    // A thread that only gained approvals has nothing to continue: its question still waits.
    const thread = answered.has(threadId) ? await ctx.store.getThread(threadIdOf(threadId)) : null;
    if (!thread) {
      ctx.runs.notifyChange(threadId);
      continue;
    }
    // A continuation that fails (another call continues the thread first) leaves the answers
    // stored: the next call or the recovery sweep continues the run.
    const run = await launch(ctx, principal, thread, { kind: "input", input: null }).catch(
      () => null,
    );
    run?.result.catch(() => undefined);
    ctx.runs.notifyChange(threadId);
  }
}
