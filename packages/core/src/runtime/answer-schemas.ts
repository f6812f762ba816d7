/**
 * Which schema checks an answer. A zod schema can say more than JSON Schema (refinements,
 * `z.date()`, transforms), so an answer is checked with the interrupt's real schema wherever this
 * process knows it, and with the stored JSON Schema only where it does not:
 *
 * 1. a declaration made with {@link defineInterrupt}, found by the name stored with the
 *    interrupt — known to every process that loads the graph's code;
 * 2. the schema passed to `interrupt(payload, { answer })` when this process raised (or re-ran)
 *    that interrupt — remembered by interrupt id, a bounded number of them;
 * 3. the JSON Schema stored with the interrupt — a process that never ran the node.
 *
 * An answer that passed only the JSON Schema may still fail the real schema on the re-run; the
 * node then asks again (see `TaskRun.interrupt`), it never fails the run.
 */
import { z } from "zod";
import type { StoredInterrupt } from "../checkpoint/types.ts";
import { InvalidAnswerError, InvalidInputError, ReinError } from "../errors.ts";
import { interrupt, type InterruptOptions } from "./context.ts";

/** Key of the stored JSON Schema that names the {@link defineInterrupt} declaration. */
export const DEFINITION_KEY = "x-rein-interrupt";

/** How many interrupt ids this process remembers the live schema of. */
const REMEMBERED = 10_000;

const definitions = new Map<string, z.ZodType>();
const namesBySchema = new WeakMap<z.ZodType, string>();
const remembered = new Map<string, z.ZodType>();

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
 */
export function defineInterrupt<Payload = unknown, Answer = unknown>(
  name: string,
  options: { answer: z.ZodType<Answer> },
): InterruptDefinition<Payload, Answer> {
  if (typeof name !== "string" || name.trim() === "")
    throw new InvalidInputError("defineInterrupt needs a non-empty name.");
  definitions.set(name, options.answer);
  namesBySchema.set(options.answer, name);
  return {
    name,
    answer: options.answer,
    ask: (payload, askOptions) =>
      interrupt<Answer>(payload, { ...askOptions, answer: options.answer }),
  };
}

/**
 * The JSON Schema to store with an interrupt raised with `schema`: what a process without the
 * real schema checks against, plus the declaration's name when there is one.
 */
export function storedAnswerSchema(schema: z.ZodType): unknown {
  const name = namesBySchema.get(schema);
  let json: Record<string, unknown> | null = null;
  try {
    json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  } catch (error) {
    if (ReinError.is(error)) throw error;
  }
  if (name === undefined) return json;
  return { ...(json ?? {}), [DEFINITION_KEY]: name };
}

/** Remembers the live schema of an interrupt this process raised or re-ran. */
export function rememberAnswerSchema(interruptId: string, schema: z.ZodType): void {
  remembered.delete(interruptId);
  remembered.set(interruptId, schema);
  if (remembered.size > REMEMBERED) {
    const oldest = remembered.keys().next();
    if (!oldest.done) remembered.delete(oldest.value);
  }
}

/**
 * @internal Forgets the schemas remembered by interrupt id, as a process that never ran the node
 * would be. For tests of the cross-process fallback.
 */
export function forgetRememberedAnswerSchemas(): void {
  remembered.clear();
}

/** The real schema of an interrupt when this process knows it. */
function realSchema(record: StoredInterrupt): z.ZodType | undefined {
  const stored = record.answerSchema;
  if (stored && typeof stored === "object" && DEFINITION_KEY in stored) {
    const declared = definitions.get(String((stored as Record<string, unknown>)[DEFINITION_KEY]));
    if (declared) return declared;
  }
  return remembered.get(record.id);
}

function jsonFallback(record: StoredInterrupt): z.ZodType | undefined {
  const stored = record.answerSchema;
  if (stored === null || stored === undefined || typeof stored !== "object") return undefined;
  const { [DEFINITION_KEY]: _name, ...json } = stored as Record<string, unknown>;
  return z.fromJSONSchema(json);
}

/**
 * Checks an answer with the interrupt's real schema when this process knows it, else with the
 * stored JSON Schema. Async refinements are awaited.
 *
 * @throws InvalidAnswerError listing the issues; the caller stores nothing.
 */
export async function checkAnswer(record: StoredInterrupt, value: unknown): Promise<void> {
  const real = realSchema(record);
  const schema = real ?? jsonFallback(record);
  if (!schema) return;
  const parsed = await schema.safeParseAsync(value);
  if (!parsed.success)
    throw new InvalidAnswerError(
      `The answer to interrupt ${record.id} does not match its schema: ${z.prettifyError(parsed.error)}`,
      {
        interruptId: record.id,
        issues: parsed.error.issues,
        checkedWith: real ? "schema" : "json-schema",
      },
    );
}
