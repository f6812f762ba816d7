/**
 * `invoke(null)` at a static pause. A thread paused only by `interruptBefore`/`interruptAfter`
 * selectors waits for nobody's answer, so plain continuation continues it (as LangGraph users
 * expect): its static interrupts are answered (recorded in the audit log with the caller as the
 * actor) and the run goes on. Where a dynamic interrupt is pending, a person's answer is needed:
 * `invoke(null)` continues nothing and returns the pause as it stands.
 */
import type { Checkpointer } from "../checkpoint/types.ts";
import { Command, type ResumeCommand, type ResumeOptions } from "../graph/command.ts";
import type { ThreadId } from "../ids.ts";

/**
 * The command that continues a thread paused only by static interrupts, or `null` when the
 * thread is not paused that way (nothing pending, or a dynamic interrupt pending).
 */
export async function staticPauseCommand(
  saver: Checkpointer,
  threadId: ThreadId,
  options: Pick<ResumeOptions, "actor" | "requestId">,
): Promise<ResumeCommand | null> {
  const pending = await saver.getThreadInterrupts(threadId, "pending");
  if (pending.length === 0 || pending.some((i) => i.kind === "dynamic")) return null;
  return Command.resumeMap(
    Object.fromEntries(pending.map((i) => [i.id, null])),
    Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  );
}
