/**
 * `defineInterrupt`: a named question with a typed answer, declared once beside the graph's code,
 * whose answer schema every process that loads the declaration checks answers with.
 */
import type { z } from "zod";
import { interrupt } from "./interrupt.ts";
import { InvalidInputError } from "../errors.ts";
import type { ApproversSpec, InterruptOptions } from "../graph/node.ts";
import { registerDefinition } from "./answer-schemas.ts";
import { planLadder } from "./ladder.ts";

/**
 * The deadline and escalation ladder every ask of a declared question gets (an ask's own options
 * override them): see `interrupt()`'s `remind`, `escalate`, `timeout` and `onTimeout`.
 */
export type DefinedLadder<Answer> = Pick<
  InterruptOptions<Answer>,
  "remind" | "escalate" | "timeout" | "onTimeout"
>;

/** The ladder options set in `options` (absent ones left out, so an ask's own still apply). */
export function ladderOf<Answer>(options: DefinedLadder<Answer>): DefinedLadder<Answer> {
  return {
    ...(options.remind !== undefined ? { remind: options.remind } : {}),
    ...(options.escalate !== undefined ? { escalate: options.escalate } : {}),
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
    ...(options.onTimeout !== undefined ? { onTimeout: options.onTimeout } : {}),
  };
}

/** A named question with a typed answer, declared once beside the graph's code. */
export interface InterruptDefinition<Payload, Answer> {
  /** Unique name within the process (namespace it: `"billing.refund-approval"`). */
  readonly name: string;
  /** The schema every answer must pass, in every process that loads this declaration. */
  readonly answer: z.ZodType<Answer>;
  /**
   * Asks the question from node code (the free `interrupt()` under the hood): pauses the run,
   * and on resume returns the answer parsed by {@link InterruptDefinition.answer}.
   */
  ask(payload: Payload, options?: Omit<InterruptOptions<Answer>, "answer">): Answer;
}

/**
 * Declares an interrupt with a typed answer. Answers to it are checked with the real zod schema
 * (refinements, dates, transforms) before anything is stored, by any process that has loaded the
 * declaration — not only by the process that raised the interrupt. Declaring a name again
 * replaces the earlier declaration (module reloads).
 *
 * @example
 * const approval = defineInterrupt<{ amount: number }, { approved: boolean; note?: string }>(
 *   "billing.refund-approval",
 *   { answer: z.object({ approved: z.boolean(), note: z.string().max(200).optional() }) },
 * );
 * graph.addNode("approve", (s) => ({ approved: approval.ask({ amount: s.amount }).approved }));
 * @throws InvalidInputError when the name is empty.
 * @throws InvalidLadderError when the ladder's steps are out of order (see `interrupt()`).
 */
export function defineInterrupt<Payload = unknown, Answer = unknown>(
  name: string,
  options: {
    answer: z.ZodType<Answer>;
    /** Who may answer (a policy, a rule or a function of the payload); see docs/governance.md. */
    approvers?: ApproversSpec<Payload>;
  } & DefinedLadder<Answer>,
): InterruptDefinition<Payload, Answer> {
  if (typeof name !== "string" || name.trim() === "")
    throw new InvalidInputError("defineInterrupt needs a non-empty name.");
  planLadder(options, new Date()); // a malformed ladder fails at the declaration, not at an ask
  registerDefinition(name, options.answer);
  return {
    name,
    answer: options.answer,
    ask: (payload, askOptions) =>
      interrupt<Answer>(payload, {
        ...(options.approvers ? { approvers: options.approvers as ApproversSpec } : {}),
        ...ladderOf(options),
        ...askOptions,
        answer: options.answer,
      }),
  };
}
