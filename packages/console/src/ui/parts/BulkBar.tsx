/**
 * The queue's bulk action bar, shown while questions are selected: Approve N / Reject N through
 * `POST /interrupts/decisions`, all or nothing. Approving anything irreversible waits for an
 * explicit confirmation naming it; a refusal lists each refused question and why, and says that
 * nothing was applied.
 */
import { useState } from "react";
import {
  BulkRefusedApiError,
  type InterruptListItem,
  type ReinClient,
  type Whoami,
} from "@rein/client";
import {
  bulkPlan,
  decidedText,
  itemLabel,
  refusedLines,
  type BulkKind,
  type BulkPlan,
} from "../bulk.ts";
import { describeError } from "../errors.ts";
import { ConfirmActions } from "./ConfirmActions.tsx";

/** A refusal of the last bulk decision. */
interface Refused {
  text: string;
  lines: { id: string; label: string; why: string }[];
}

/** The bar. */
export function BulkBar(props: {
  client: ReinClient;
  me: Whoami;
  selected: InterruptListItem[];
  onDone: (text: string) => void;
  onClear: () => void;
  onDeselect: (ids: string[]) => void;
}) {
  const { selected } = props;
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [refused, setRefused] = useState<Refused | null>(null);
  const n = selected.length;
  const approve = bulkPlan(selected, "approve", props.me);
  const reject = bulkPlan(selected, "reject", props.me);

  const send = (kind: BulkKind) => {
    setBusy(true);
    setRefused(null);
    setConfirming(false);
    void sendBulk(props.client, selected, kind, kind === "approve" ? approve.answer : reject.answer)
      .then((outcome) => {
        if (outcome.refused) return setRefused(outcome.refused);
        props.onDone(outcome.text);
        props.onClear();
      })
      .finally(() => setBusy(false));
  };

  if (n === 0 && !refused) return null;
  return (
    <section className="bulk" aria-label="Bulk decision">
      {n > 0 && (
        <div className="actions" role="group" aria-label="Decide the selected questions">
          <span className="selected-count" aria-live="polite">
            {n} selected
          </span>
          <button
            type="button"
            className="primary"
            disabled={busy || confirming || approve.unfit.length > 0}
            onClick={() =>
              approve.irreversible.length > 0 ? setConfirming(true) : send("approve")
            }
          >
            Approve {n}
          </button>
          <button
            type="button"
            disabled={busy || confirming || reject.unfit.length > 0}
            onClick={() => send("reject")}
          >
            Reject {n}
          </button>
          <button type="button" disabled={busy} onClick={props.onClear}>
            Clear selection
          </button>
        </div>
      )}
      {n > 0 && <BulkNotes plan={approve} />}
      {confirming && (
        <BulkConfirm
          irreversible={approve.irreversible}
          count={n}
          busy={busy}
          onConfirm={() => send("approve")}
          onBack={() => setConfirming(false)}
        />
      )}
      {refused && (
        <BulkRefusal
          refused={refused}
          onDeselect={(ids) => {
            props.onDeselect(ids);
            setRefused(null);
          }}
        />
      )}
    </section>
  );
}

/**
 * Sends one bulk decision: a sentence of what it did, or the refusal (every refused question
 * and why, or the error in words).
 */
async function sendBulk(
  client: ReinClient,
  selected: InterruptListItem[],
  kind: BulkKind,
  answer: unknown,
): Promise<{ text: string; refused?: never } | { refused: Refused; text?: never }> {
  try {
    const result = await client.decide(
      { ids: selected.map((i) => i.id), resume: answer },
      { idempotencyKey: crypto.randomUUID() },
    );
    return { text: decidedText(kind, result) };
  } catch (error) {
    if (!(error instanceof BulkRefusedApiError))
      return { refused: { text: describeError(error), lines: [] } };
    const lines = refusedLines(error.refused, selected);
    const n = selected.length;
    const text = `Nothing was applied: ${lines.length} of ${n} selected ${n === 1 ? "question was" : "questions were"} refused, and a bulk decision applies to all or none.`;
    return { refused: { text, lines } };
  }
}

/** Why the selection cannot be approved at once, and which policies will likely refuse it. */
function BulkNotes({ plan }: { plan: BulkPlan }) {
  return (
    <>
      {plan.unfit.length > 0 && (
        <p className="hint">
          Not all of the selection can be decided at once:{" "}
          {plan.unfit.map((u) => `${itemLabel(u.item)} (${u.why})`).join("; ")}.
        </p>
      )}
      {plan.warnings.length > 0 && (
        <p className="conflict-soon">
          The server will refuse the whole decision if it refuses one:{" "}
          {plan.warnings.map((w) => `${itemLabel(w.item)}: ${w.why}`).join(" ")}
        </p>
      )}
    </>
  );
}

/** The explicit confirmation that approving something irreversible needs, naming each. */
function BulkConfirm(props: {
  irreversible: InterruptListItem[];
  count: number;
  busy: boolean;
  onConfirm: () => void;
  onBack: () => void;
}) {
  const { irreversible } = props;
  return (
    <div className="confirm" role="group" aria-labelledby="bulk-confirm-title">
      <h2 id="bulk-confirm-title">This cannot be undone</h2>
      <p>Approving runs {irreversible.length === 1 ? "this" : "these"} as soon as you confirm:</p>
      <ul aria-label="Irreversible actions selected">
        {irreversible.map((i) => (
          <li key={i.id}>{itemLabel(i)}</li>
        ))}
      </ul>
      <ConfirmActions
        label={`Confirm: approve ${props.count}`}
        busy={props.busy}
        onConfirm={props.onConfirm}
        onBack={props.onBack}
      />
    </div>
  );
}

/** A refused bulk decision: nothing applied, each refused question and why. */
function BulkRefusal(props: { refused: Refused; onDeselect: (ids: string[]) => void }) {
  const { refused } = props;
  return (
    <div role="alert" className="error">
      <p>{refused.text}</p>
      {refused.lines.length > 0 && (
        <>
          <ul aria-label="Refused questions">
            {refused.lines.map((l) => (
              <li key={l.id}>
                <strong>{l.label}</strong>: {l.why}
              </li>
            ))}
          </ul>
          <button type="button" onClick={() => props.onDeselect(refused.lines.map((l) => l.id))}>
            Deselect the refused
          </button>
        </>
      )}
    </div>
  );
}
