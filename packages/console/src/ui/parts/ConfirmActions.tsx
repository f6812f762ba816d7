/**
 * The two buttons of an explicit confirmation (an irreversible action, one or in bulk): the
 * dangerous one that goes ahead, and Back.
 */

/** Confirm (`label`) and Back, both off while `busy`. */
export function ConfirmActions(props: {
  label: string;
  busy: boolean;
  onConfirm: () => void;
  onBack: () => void;
}) {
  return (
    <div className="actions">
      <button type="button" className="danger" disabled={props.busy} onClick={props.onConfirm}>
        {props.label}
      </button>
      <button type="button" disabled={props.busy} onClick={props.onBack}>
        Back
      </button>
    </div>
  );
}
