/**
 * A decision payload as a card: the action, what it is for, its arguments, and the answers its
 * `allow` permits. Editing opens a form generated from the arguments, checked (types, then the
 * interrupt's answer schema) before anything is sent.
 */
import { useState, type FormEvent } from "react";
import {
  argFields,
  checkAnswer,
  decisionAnswer,
  readArgs,
  type DecisionKind,
  type DecisionPayload,
} from "../decision.ts";
import type { SchemaProblem } from "../schema.ts";

/** The card. */
export function DecisionCard(props: {
  decision: DecisionPayload;
  schema: unknown;
  busy: boolean;
  onAnswer: (answer: unknown, kind: DecisionKind) => void;
}) {
  const { decision, schema, busy } = props;
  const fields = argFields(decision.args);
  const [mode, setMode] = useState<"edit" | "respond" | null>(null);
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(fields.map((f) => [f.name, f.initial])),
  );
  const [text, setText] = useState("");
  const [problems, setProblems] = useState<SchemaProblem[]>([]);

  const answer = (
    kind: DecisionKind,
    extra: { args?: Record<string, unknown>; text?: string } = {},
  ) => {
    const value = decisionAnswer(kind, { ...extra, schema });
    const found = checkAnswer(schema, value);
    setProblems(found);
    if (found.length === 0) props.onAnswer(value, kind);
  };

  const submitEdit = (event: FormEvent) => {
    event.preventDefault();
    const read = readArgs(fields, values);
    if (!read.ok) setProblems(read.problems);
    else answer("edit", { args: read.args });
  };

  const submitRespond = (event: FormEvent) => {
    event.preventDefault();
    if (!text.trim()) setProblems([{ path: "response", message: "Write the response first." }]);
    else answer("respond", { text: text.trim() });
  };

  const bad = (name: string) =>
    problems.some((p) => p.path === name || p.path.endsWith(`.${name}`));

  return (
    <article className="card" aria-labelledby="card-action">
      <h2 id="card-action">
        <span className="verb">Action</span> {decision.action}
      </h2>
      {decision.description && <p className="description">{decision.description}</p>}
      <table className="args" aria-label="Arguments">
        <tbody>
          {fields.map((f) => (
            <tr key={f.name}>
              <th scope="row">{f.name}</th>
              <td>
                <code>{f.initial}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="actions" role="group" aria-label="Decide">
        {decision.allow.accept && (
          <button
            type="button"
            className="primary"
            disabled={busy}
            onClick={() => answer("accept")}
          >
            Accept
          </button>
        )}
        {decision.allow.edit && (
          <button
            type="button"
            disabled={busy}
            aria-expanded={mode === "edit"}
            onClick={() => setMode(mode === "edit" ? null : "edit")}
          >
            Edit arguments
          </button>
        )}
        {decision.allow.respond && (
          <button
            type="button"
            disabled={busy}
            aria-expanded={mode === "respond"}
            onClick={() => setMode(mode === "respond" ? null : "respond")}
          >
            Respond
          </button>
        )}
        {decision.allow.ignore && (
          <button type="button" disabled={busy} onClick={() => answer("ignore")}>
            Ignore
          </button>
        )}
      </div>
      {mode === "edit" && (
        <form className="edit" aria-label="Edit arguments" onSubmit={submitEdit} noValidate>
          {fields.map((f) => (
            <div key={f.name} className="field">
              <label htmlFor={`arg-${f.name}`}>{f.name}</label>
              {f.kind === "boolean" ? (
                <select
                  id={`arg-${f.name}`}
                  value={values[f.name]}
                  onChange={(e) => setValues({ ...values, [f.name]: e.target.value })}
                >
                  <option value="true">true</option>
                  <option value="false">false</option>
                </select>
              ) : f.kind === "json" ? (
                <textarea
                  id={`arg-${f.name}`}
                  rows={4}
                  value={values[f.name]}
                  aria-invalid={bad(f.name) || undefined}
                  onChange={(e) => setValues({ ...values, [f.name]: e.target.value })}
                />
              ) : (
                <input
                  id={`arg-${f.name}`}
                  inputMode={f.kind === "number" ? "decimal" : undefined}
                  value={values[f.name]}
                  aria-invalid={bad(f.name) || undefined}
                  onChange={(e) => setValues({ ...values, [f.name]: e.target.value })}
                />
              )}
            </div>
          ))}
          <button type="submit" className="primary" disabled={busy}>
            Accept with these arguments
          </button>
        </form>
      )}
      {mode === "respond" && (
        <form className="respond" aria-label="Respond" onSubmit={submitRespond} noValidate>
          <label htmlFor="response-text">Response to the agent</label>
          <textarea
            id="response-text"
            rows={3}
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
          <button type="submit" disabled={busy}>
            Send response
          </button>
        </form>
      )}
      {problems.length > 0 && <Problems problems={problems} />}
    </article>
  );
}

/** Validation problems, announced. */
export function Problems({ problems }: { problems: SchemaProblem[] }) {
  return (
    <div role="alert" className="error">
      <p>Not sent. Fix this first:</p>
      <ul>
        {problems.map((p, i) => (
          <li key={i}>{p.message}</li>
        ))}
      </ul>
    </div>
  );
}
