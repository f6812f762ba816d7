/**
 * Which schema checks an answer. A zod schema can say more than JSON Schema (refinements,
 * `z.date()`, transforms), so an answer is checked with the interrupt's real schema wherever this
 * process knows it, and with the stored JSON Schema only where it does not:
 *
 * 1. a declaration made with `defineInterrupt` (see `define.ts`), found by the name stored with the
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
import { InvalidAnswerError, ReinError } from "../errors.ts";
import { answerIssues, describeIssues } from "./answer-issues.ts";

/** Key of the stored JSON Schema that names the {@link defineInterrupt} declaration. */
export const DEFINITION_KEY = "x-rein-interrupt";

/** How many interrupt ids this process remembers the live schema of. */
const REMEMBERED = 10_000;

const definitions = new Map<string, z.ZodType>();
const namesBySchema = new WeakMap<z.ZodType, string>();
const remembered = new Map<string, z.ZodType>();

/**
 * Registers a {@link defineInterrupt} declaration: answers to interrupts stored under `name` are
 * checked with `schema` by this process. A name declared again replaces the earlier schema.
 */
export function registerDefinition(name: string, schema: z.ZodType): void {
  definitions.set(name, schema);
  namesBySchema.set(schema, name);
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
  if (!parsed.success) {
    const issues = answerIssues(parsed.error.issues);
    throw new InvalidAnswerError(
      `The answer to interrupt ${record.id} does not match its schema: ${describeIssues(issues)}. Nothing was stored; the interrupt is still pending.`,
      { interruptId: record.id, issues, checkedWith: real ? "schema" : "json-schema" },
    );
  }
}
