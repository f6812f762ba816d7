/**
 * The decision convention (SPEC §3): a payload `{ action, args, description, allow }` is shown as
 * a card with accept / edit / respond / ignore where `allow` permits. This module recognises such
 * payloads, turns `args` into form fields and back (typed, validated), and builds the answers.
 */
import { checkSchema, type SchemaProblem } from "./schema.ts";

/** What a reviewer may do with a decision. */
export type DecisionKind = "accept" | "edit" | "respond" | "ignore";

/** One message of the conversation that led to a decision. */
export interface ContextMessage {
  role: string;
  name?: string;
  text: string;
}

/**
 * The convention's `context` (docs/console.md): why the agent asks, the turns before the call,
 * labelled facts and links.
 */
export interface DecisionContext {
  summary: string;
  messages: ContextMessage[];
  facts: { label: string; value: string }[];
  links: { label: string; href: string }[];
}

/** A payload that follows the decision convention. */
export interface DecisionPayload {
  action: string;
  args: Record<string, unknown>;
  description: string;
  allow: Record<DecisionKind, boolean>;
  /** Why the agent asks, when the payload says. */
  context: DecisionContext | null;
  /** The effect cannot be undone: accepting needs an explicit confirmation. */
  irreversible: boolean;
  /** Units of numeric arguments (`{ amount: "USD" }`): an ISO 4217 code formats as money. */
  units: Record<string, string>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The payload as a decision, or null when it does not follow the convention. */
export function asDecision(payload: unknown): DecisionPayload | null {
  if (!isObject(payload)) return null;
  const { action, args, description, allow } = payload;
  if (typeof action !== "string" || !isObject(args) || !isObject(allow)) return null;
  return {
    action,
    args,
    description: typeof description === "string" ? description : "",
    allow: {
      accept: allow["accept"] === true,
      edit: allow["edit"] === true,
      respond: allow["respond"] === true,
      ignore: allow["ignore"] === true,
    },
    context: asContext(payload["context"]),
    irreversible: payload["irreversible"] === true,
    units: unitsOf(payload),
  };
}

const str = (v: unknown): v is string => typeof v === "string";

/** The payload's `context`, keeping only well-formed entries. */
function asContext(value: unknown): DecisionContext | null {
  if (!isObject(value) || !str(value["summary"])) return null;
  const list = (v: unknown) => (Array.isArray(v) ? v.filter(isObject) : []);
  return {
    summary: value["summary"],
    messages: list(value["messages"])
      .filter((m) => str(m["role"]) && str(m["text"]))
      .map((m) => ({
        role: m["role"] as string,
        text: m["text"] as string,
        ...(str(m["name"]) ? { name: m["name"] } : {}),
      })),
    facts: list(value["facts"])
      .filter((f) => str(f["label"]) && str(f["value"]))
      .map((f) => ({ label: f["label"] as string, value: f["value"] as string })),
    links: list(value["links"])
      .filter((l) => str(l["label"]) && str(l["href"]) && /^https?:|^#/.test(l["href"]))
      .map((l) => ({ label: l["label"] as string, href: l["href"] as string })),
  };
}

/**
 * Units of the arguments: the payload's `units`, else the `unit` keyword of each property of its
 * `argsSchema` (what a zod `.meta({ unit: "USD" })` puts in the tool's JSON Schema).
 */
function unitsOf(payload: Record<string, unknown>): Record<string, string> {
  const units: Record<string, string> = {};
  const schema = payload["argsSchema"];
  const props = isObject(schema) && isObject(schema["properties"]) ? schema["properties"] : {};
  for (const [name, prop] of Object.entries(props))
    if (isObject(prop) && str(prop["unit"])) units[name] = prop["unit"];
  if (isObject(payload["units"]))
    for (const [name, unit] of Object.entries(payload["units"])) if (str(unit)) units[name] = unit;
  return units;
}

/** An argument the reviewer changed: its name, what the model asked, what will be sent. */
export interface ArgChange {
  name: string;
  before: unknown;
  after: unknown;
}

/** The arguments an edit changes, in the arguments' order (added ones last). */
export function argChanges(
  original: Record<string, unknown>,
  edited: Record<string, unknown>,
): ArgChange[] {
  const names = [...new Set([...Object.keys(original), ...Object.keys(edited)])];
  return names
    .filter((n) => JSON.stringify(original[n]) !== JSON.stringify(edited[n]))
    .map((name) => ({ name, before: original[name], after: edited[name] }));
}

/**
 * How an argument is edited: numbers and booleans keep their type; strings are a line, or a text
 * area when they hold line breaks or run long; the rest is JSON.
 */
export type FieldKind = "number" | "boolean" | "string" | "text" | "json";

/** One generated form field. */
export interface ArgField {
  name: string;
  kind: FieldKind;
  /** The text in the input (`"true"`/`"false"` for booleans). */
  initial: string;
}

/** Form fields for the arguments, in their order. */
export function argFields(args: Record<string, unknown>): ArgField[] {
  return Object.entries(args).map(([name, value]) => {
    if (typeof value === "number") return { name, kind: "number", initial: String(value) };
    if (typeof value === "boolean") return { name, kind: "boolean", initial: String(value) };
    if (typeof value === "string")
      return {
        name,
        kind: value.includes("\n") || value.length > 80 ? "text" : "string",
        initial: value,
      };
    return { name, kind: "json", initial: JSON.stringify(value, null, 2) };
  });
}

/** Arguments read back from the form, or the problems that stop them being sent. */
export type ReadArgs =
  { ok: true; args: Record<string, unknown> } | { ok: false; problems: SchemaProblem[] };

/** Reads the edited arguments: numbers must be finite numbers, JSON must parse. */
export function readArgs(fields: readonly ArgField[], values: Record<string, string>): ReadArgs {
  const args: Record<string, unknown> = {};
  const problems: SchemaProblem[] = [];
  for (const field of fields) {
    const text = values[field.name] ?? field.initial;
    if (field.kind === "number") {
      const n = Number(text);
      if (text.trim() === "" || !Number.isFinite(n))
        problems.push({ path: field.name, message: `${field.name} must be a number` });
      else args[field.name] = n;
    } else if (field.kind === "boolean") args[field.name] = text === "true";
    else if (field.kind === "string" || field.kind === "text") args[field.name] = text;
    else {
      try {
        args[field.name] = JSON.parse(text) as unknown;
      } catch {
        problems.push({ path: field.name, message: `${field.name} must be valid JSON` });
      }
    }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, args };
}

/**
 * The property a `respond` answer carries its text in: read from the answer schema's respond
 * variant (the test desk uses `text`, core's tool decisions `message`), `message` by default.
 */
export function respondField(schema: unknown): string {
  const variants = isObject(schema)
    ? [...asArray(schema["oneOf"]), ...asArray(schema["anyOf"])]
    : [];
  for (const variant of variants) {
    if (!isObject(variant) || !isObject(variant["properties"])) continue;
    const props = variant["properties"];
    const type = props["type"];
    if (!isObject(type) || type["const"] !== "respond") continue;
    const field = Object.entries(props).find(
      ([key, sub]) => key !== "type" && isObject(sub) && sub["type"] === "string",
    );
    if (field) return field[0];
  }
  return "message";
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The answer of each kind of decision. */
export function decisionAnswer(
  kind: DecisionKind,
  options: { args?: Record<string, unknown>; text?: string; schema?: unknown } = {},
): Record<string, unknown> {
  if (kind === "edit") return { type: "edit", args: options.args ?? {} };
  if (kind === "respond")
    return { type: "respond", [respondField(options.schema)]: options.text ?? "" };
  return { type: kind };
}

/** Problems of an answer against the interrupt's answer schema (none when it has no schema). */
export function checkAnswer(schema: unknown, answer: unknown): SchemaProblem[] {
  if (schema === null || schema === undefined) return [];
  if (typeof schema !== "boolean" && !isObject(schema)) return [];
  return checkSchema(schema, answer);
}
