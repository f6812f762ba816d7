/**
 * Any payload that is not a decision: the payload as JSON and an answer editor, checked against
 * the interrupt's answer schema (when it declares one) before sending.
 */
import { useState, type FormEvent } from "react";
import { checkAnswer } from "../decision.ts";
import type { SchemaProblem } from "../schema.ts";
import { Problems } from "./DecisionCard.tsx";

/** A starting answer that fits the common `{ text }`-like schemas. */
function template(schema: unknown): string {
  const props =
    typeof schema === "object" && schema !== null
      ? (schema as { properties?: Record<string, { type?: unknown }> }).properties
      : undefined;
  if (!props) return "";
  const value = Object.fromEntries(
    Object.entries(props).map(([k, s]) => [
      k,
      s.type === "number" || s.type === "integer" ? 0 : s.type === "boolean" ? false : "",
    ]),
  );
  return JSON.stringify(value, null, 2);
}

/** The JSON answer editor. */
export function JsonAnswer(props: {
  payload: unknown;
  schema: unknown;
  busy: boolean;
  onAnswer: (answer: unknown) => void;
}) {
  const [text, setText] = useState(() => template(props.schema));
  const [problems, setProblems] = useState<SchemaProblem[]>([]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      setProblems([{ path: "", message: "The answer is not valid JSON." }]);
      return;
    }
    const found = checkAnswer(props.schema, value);
    setProblems(found);
    if (found.length === 0) props.onAnswer(value);
  };

  return (
    <article className="card" aria-labelledby="question-title">
      <h2 id="question-title">Question</h2>
      <pre className="payload" aria-label="Payload" tabIndex={0}>
        {JSON.stringify(props.payload, null, 2)}
      </pre>
      <form onSubmit={submit} noValidate aria-label="Answer">
        <label htmlFor="json-answer">Answer (JSON)</label>
        <textarea
          id="json-answer"
          rows={6}
          spellCheck={false}
          value={text}
          aria-invalid={problems.length > 0 || undefined}
          onChange={(e) => setText(e.target.value)}
        />
        {props.schema !== null && props.schema !== undefined && (
          <details>
            <summary>Expected shape (JSON Schema)</summary>
            <pre tabIndex={0}>{JSON.stringify(props.schema, null, 2)}</pre>
          </details>
        )}
        <button type="submit" className="primary" disabled={props.busy}>
          Send answer
        </button>
      </form>
      {problems.length > 0 && <Problems problems={problems} />}
    </article>
  );
}
