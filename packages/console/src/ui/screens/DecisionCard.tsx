/**
 * A decision payload as a card: the action, its arguments, and the answers its `allow` permits.
 * Editing replaces the buttons with one accept, shows the edits against what the model asked,
 * and re-checks the values as they are typed. An irreversible action is accepted only through an
 * explicit confirmation.
 */
import type { FormEvent } from "react";
import { HOLD_NOTE_ID } from "../approval.ts";
import { useCardForm, type CardForm, type Pending } from "../card-form.ts";
import type { ArgChange, ArgField, DecisionKind, DecisionPayload } from "../decision.ts";
import { formatValue, humanize } from "../format.ts";
import { ConfirmActions } from "../parts/ConfirmActions.tsx";
import type { Hold } from "../question-view.ts";
import type { SchemaProblem } from "../schema.ts";

/** The card. */
export function DecisionCard(props: {
  decision: DecisionPayload;
  schema: unknown;
  busy: boolean;
  hold?: Hold;
  onAnswer: (answer: unknown, kind: DecisionKind) => void;
}) {
  const { decision, busy, hold = "none" } = props;
  const form = useCardForm(decision, props.schema, props.onAnswer);
  const { mode, confirming } = form;

  return (
    <article className="card" aria-labelledby="card-action">
      <CardHead decision={decision} fields={form.fields} />
      {mode !== "edit" && !confirming && (
        <DecideButtons
          allow={decision.allow}
          busy={busy}
          hold={hold}
          responding={mode === "respond"}
          onAccept={() => form.answer("accept")}
          onEdit={form.startEdit}
          onRespond={form.toggleRespond}
          onIgnore={() => form.answer("ignore")}
        />
      )}
      {mode === "edit" && (
        <EditForm
          fields={form.fields}
          values={form.values}
          bad={form.bad}
          changes={form.changes}
          units={decision.units}
          busy={busy || hold === "all"}
          confirming={confirming !== null}
          onEdit={form.edit}
          onSubmit={form.submitEdit}
          onCancel={form.cancelEdit}
        />
      )}
      {mode === "respond" && !confirming && (
        <RespondForm form={form} disabled={busy || hold !== "none"} />
      )}
      {confirming && (
        <Confirm
          decision={decision}
          pending={confirming}
          busy={busy}
          onConfirm={() => props.onAnswer(confirming.value, confirming.kind)}
          onBack={form.back}
        />
      )}
      {form.problems.length > 0 && <Problems problems={form.problems} />}
    </article>
  );
}

/** The action, whether it can be undone, why it is asked, and its arguments as asked. */
function CardHead({ decision, fields }: { decision: DecisionPayload; fields: ArgField[] }) {
  return (
    <>
      <h2 id="card-action">
        <span className="verb">Action</span> {humanize(decision.action)}
      </h2>
      {decision.irreversible && (
        <p className="irreversible-note">
          <strong>Irreversible.</strong> Once accepted this cannot be undone; you will be asked to
          confirm.
        </p>
      )}
      {decision.description && <p className="description">{decision.description}</p>}
      <table className="args" aria-label="Arguments the agent asks for">
        <tbody>
          {fields.map((f) => (
            <tr key={f.name}>
              <th scope="row">{f.name}</th>
              <td className={f.kind === "text" ? "multiline" : undefined}>
                {formatValue(decision.args[f.name], decision.units[f.name])}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The response to the agent, written instead of an answer it proposed. */
function RespondForm({ form, disabled }: { form: CardForm; disabled: boolean }) {
  return (
    <form className="respond" aria-label="Respond" onSubmit={form.submitRespond} noValidate>
      <label htmlFor="response-text">Response to the agent</label>
      <textarea
        id="response-text"
        rows={3}
        value={form.text}
        onChange={(e) => form.setText(e.target.value)}
      />
      <button type="submit" disabled={disabled}>
        Send response
      </button>
    </form>
  );
}

/** Accept / Edit arguments / Respond / Ignore, each where `allow` permits. */
function DecideButtons(props: {
  allow: DecisionPayload["allow"];
  busy: boolean;
  hold: Hold;
  responding: boolean;
  onAccept: () => void;
  onEdit: () => void;
  onRespond: () => void;
  onIgnore: () => void;
}) {
  const { allow, busy, hold } = props;
  // Accept and Respond are approvals; Edit restarts the count, Ignore rejects.
  const approveHeld = hold !== "none";
  const anyHeld = hold === "all";
  const why = (held: boolean) => (held ? { "aria-describedby": HOLD_NOTE_ID } : {});
  return (
    <div className="actions" role="group" aria-label="Decide">
      {allow.accept && (
        <button
          type="button"
          className="primary"
          disabled={busy || approveHeld}
          {...why(approveHeld)}
          onClick={props.onAccept}
        >
          Accept
        </button>
      )}
      {allow.edit && (
        <button type="button" disabled={busy || anyHeld} {...why(anyHeld)} onClick={props.onEdit}>
          Edit arguments
        </button>
      )}
      {allow.respond && (
        <button
          type="button"
          disabled={busy || approveHeld}
          {...why(approveHeld)}
          aria-expanded={props.responding}
          onClick={props.onRespond}
        >
          Respond
        </button>
      )}
      {allow.ignore && (
        <button type="button" disabled={busy || anyHeld} {...why(anyHeld)} onClick={props.onIgnore}>
          Ignore
        </button>
      )}
    </div>
  );
}

/** The edit form: one field per argument, the edits as a diff, and the one accept. */
function EditForm(props: {
  fields: ArgField[];
  values: Record<string, string>;
  bad: (name: string) => boolean;
  changes: ArgChange[];
  units: Record<string, string>;
  busy: boolean;
  confirming: boolean;
  onEdit: (name: string, value: string) => void;
  onSubmit: (event: FormEvent) => void;
  onCancel: () => void;
}) {
  const { fields, values, changes, units, busy } = props;
  return (
    <form className="edit" aria-label="Edit arguments" onSubmit={props.onSubmit} noValidate>
      {fields.map((f) => (
        <Field
          key={f.name}
          field={f}
          value={values[f.name] ?? ""}
          bad={props.bad(f.name)}
          onChange={props.onEdit}
        />
      ))}
      <section className="diff" aria-labelledby="diff-title">
        <h3 id="diff-title">Your edits against what the model asked</h3>
        {changes.length === 0 ? (
          <p>No changes yet: accepting sends the arguments as the model asked.</p>
        ) : (
          <ul aria-label="Changed arguments">
            {changes.map((c) => (
              <li key={c.name}>
                <strong>{c.name}</strong>: <del>{formatValue(c.before, units[c.name])}</del> →{" "}
                <ins>{formatValue(c.after, units[c.name])}</ins>
              </li>
            ))}
          </ul>
        )}
      </section>
      {!props.confirming && (
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Accept with these arguments
          </button>
          <button type="button" disabled={busy} onClick={props.onCancel}>
            Cancel editing
          </button>
        </div>
      )}
    </form>
  );
}

/** One generated input: a choice, a text area (multi-line text, JSON) or a line. */
function Field(props: {
  field: ArgField;
  value: string;
  bad: boolean;
  onChange: (name: string, value: string) => void;
}) {
  const { field: f, value, bad } = props;
  const id = `arg-${f.name}`;
  const change = (e: { target: { value: string } }) => props.onChange(f.name, e.target.value);
  return (
    <div className="field">
      <label htmlFor={id}>{f.name}</label>
      {f.kind === "boolean" ? (
        <select id={id} value={value} onChange={change}>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      ) : f.kind === "json" || f.kind === "text" ? (
        <textarea
          id={id}
          rows={Math.min(12, Math.max(3, value.split("\n").length + 1))}
          value={value}
          spellCheck={f.kind === "text"}
          aria-invalid={bad || undefined}
          onChange={change}
        />
      ) : (
        <input
          id={id}
          inputMode={f.kind === "number" ? "decimal" : undefined}
          value={value}
          aria-invalid={bad || undefined}
          onChange={change}
        />
      )}
    </div>
  );
}

/** The explicit confirmation an irreversible action needs. */
function Confirm(props: {
  decision: DecisionPayload;
  pending: Pending;
  busy: boolean;
  onConfirm: () => void;
  onBack: () => void;
}) {
  const { decision, pending } = props;
  const what = humanize(decision.action);
  const args = Object.entries(pending.args)
    .map(([k, v]) => `${k} ${formatValue(v, decision.units[k])}`)
    .join(", ");
  return (
    <div className="confirm" role="group" aria-labelledby="confirm-title">
      <h3 id="confirm-title">This cannot be undone</h3>
      <p>
        {what} runs as soon as you confirm, with {args}.
      </p>
      <ConfirmActions
        label={`Confirm: ${what.toLowerCase()}`}
        busy={props.busy}
        onConfirm={props.onConfirm}
        onBack={props.onBack}
      />
    </div>
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
