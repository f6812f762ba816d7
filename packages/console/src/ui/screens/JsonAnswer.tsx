/**
 * Any payload that is not a decision: the question as text (its other fields labelled, the raw
 * JSON on demand) and an answer editor, checked against the interrupt's answer schema (when it
 * declares one) before sending.
 */
import { useState, type FormEvent } from "react";
import { checkAnswer } from "../decision.ts";
import { formatValue } from "../format.ts";
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
      <h2 id="question-title">The question</h2>
      <Readable payload={props.payload} />
      <details>
        <summary>Raw payload (JSON)</summary>
        <pre className="payload" aria-label="Payload" tabIndex={0}>
          {JSON.stringify(props.payload, null, 2)}
        </pre>
      </details>
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

const QUESTION_KEYS = ["question", "message", "prompt", "description", "text"];

/** The payload as a person reads it: the question as a paragraph, other fields labelled. */
function Readable({ payload }: { payload: unknown }) {
  if (typeof payload === "string") return <p className="question">{payload}</p>;
  if (typeof payload !== "object" || payload === null || Array.isArray(payload))
    return <p className="question">{formatValue(payload)}</p>;
  const record = payload as Record<string, unknown>;
  const key = QUESTION_KEYS.find((k) => typeof record[k] === "string");
  const rest = Object.entries(record).filter(([k]) => k !== key);
  return (
    <>
      {key && <p className="question">{record[key] as string}</p>}
      {rest.length > 0 && (
        <dl className="facts">
          {rest.map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{formatValue(v)}</dd>
            </div>
          ))}
        </dl>
      )}
    </>
  );
}
