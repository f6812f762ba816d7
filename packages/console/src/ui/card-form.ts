/**
 * The decision card's form state: which answer is being written (an edit, a response), the
 * edited values, the response, the problems shown, and an irreversible answer waiting for its
 * confirmation. Every answer is checked against the schema before it goes; a shown problem goes
 * as soon as the edited value is valid.
 */
import { useState, type FormEvent } from "react";
import {
  argChanges,
  argFields,
  checkAnswer,
  decisionAnswer,
  readArgs,
  type ArgChange,
  type ArgField,
  type DecisionKind,
  type DecisionPayload,
} from "./decision.ts";
import type { SchemaProblem } from "./schema.ts";

/** An answer waiting for the reviewer's confirmation. */
export interface Pending {
  kind: DecisionKind;
  value: unknown;
  args: Record<string, unknown>;
}

/** What the card shows and what its controls do. */
export interface CardForm {
  fields: ArgField[];
  mode: "edit" | "respond" | null;
  values: Record<string, string>;
  text: string;
  problems: SchemaProblem[];
  confirming: Pending | null;
  /** The edits against what the model asked (none while a value does not read). */
  changes: ArgChange[];
  /** True when a shown problem is about the argument `name`. */
  bad: (name: string) => boolean;
  answer: (kind: DecisionKind) => void;
  startEdit: () => void;
  toggleRespond: () => void;
  cancelEdit: () => void;
  edit: (name: string, value: string) => void;
  setText: (text: string) => void;
  submitEdit: (event: FormEvent) => void;
  submitRespond: (event: FormEvent) => void;
  back: () => void;
}

type Extra = { args?: Record<string, unknown>; text?: string };

/** The form of the card for `decision`; a checked answer goes to `onAnswer`. */
export function useCardForm(
  decision: DecisionPayload,
  schema: unknown,
  onAnswer: (answer: unknown, kind: DecisionKind) => void,
): CardForm {
  const fields = argFields(decision.args);
  const [mode, setMode] = useState<"edit" | "respond" | null>(null);
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(fields.map((f) => [f.name, f.initial])),
  );
  const [text, setText] = useState("");
  const [problems, setProblems] = useState<SchemaProblem[]>([]);
  const [confirming, setConfirming] = useState<Pending | null>(null);

  const check = (kind: DecisionKind, extra: Extra) => {
    const value = decisionAnswer(kind, { ...extra, schema });
    return { value, problems: checkAnswer(schema, value) };
  };
  const answer = (kind: DecisionKind, extra: Extra = {}) => {
    const checked = check(kind, extra);
    setProblems(checked.problems);
    if (checked.problems.length > 0) return;
    // Accepting an irreversible action (as asked or edited) waits for an explicit confirmation.
    if (decision.irreversible && (kind === "accept" || kind === "edit"))
      setConfirming({ kind, value: checked.value, args: extra.args ?? decision.args });
    else onAnswer(checked.value, kind);
  };
  const edit = (name: string, value: string) => {
    const next = { ...values, [name]: value };
    setValues(next);
    setConfirming(null);
    // Once a problem is shown, it goes as soon as the value is valid.
    if (problems.length > 0) {
      const read = readArgs(fields, next);
      setProblems(read.ok ? check("edit", { args: read.args }).problems : read.problems);
    }
  };
  const read = readArgs(fields, values);

  return {
    fields,
    mode,
    values,
    text,
    problems,
    confirming,
    changes: read.ok ? argChanges(decision.args, read.args) : [],
    bad: (name) => problems.some((p) => p.path === name || p.path.endsWith(`.${name}`)),
    answer: (kind) => answer(kind),
    startEdit: () => setMode("edit"),
    toggleRespond: () => setMode(mode === "respond" ? null : "respond"),
    cancelEdit: () => {
      setMode(null);
      setProblems([]);
    },
    edit,
    setText,
    submitEdit: (event) => {
      event.preventDefault();
      if (!read.ok) setProblems(read.problems);
      else answer("edit", { args: read.args });
    },
    submitRespond: (event) => {
      event.preventDefault();
      if (!text.trim()) setProblems([{ path: "response", message: "Write the response first." }]);
      else answer("respond", { text: text.trim() });
    },
    back: () => setConfirming(null),
  };
}
