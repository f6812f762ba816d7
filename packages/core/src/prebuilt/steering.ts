/**
 * Steering reaches the model as a marked user message: a person's instruction, recorded apart
 * from the answer (SPEC §3), becomes `{ role: "user", steering: { id, actor }, content }` with
 * the text prefixed `[Steering from <actor>]`. Each record is delivered once per conversation.
 */
import type { SteeringRecord } from "../types.ts";
import type { Message, UserMessage } from "./messages.ts";

/** The prefix that marks a steering message's text. */
export function steeringPrefix(actor: string): string {
  return `[Steering from ${actor}]`;
}

/** Messages for the steering records not yet in `messages` (matched by steering id). */
export function steeringMessages(
  records: readonly SteeringRecord[],
  messages: readonly Message[],
): UserMessage[] {
  if (records.length === 0) return [];
  const delivered = new Set<string>();
  for (const m of messages) if (m.role === "user" && m.steering) delivered.add(m.steering.id);
  return records
    .filter((r) => !delivered.has(r.id))
    .map((r) => ({
      role: "user",
      content: `${steeringPrefix(r.actor)} ${r.text}`,
      steering: {
        id: r.id,
        actor: r.actor,
        ...(r.interruptId !== undefined ? { interruptId: r.interruptId } : {}),
      },
    }));
}
