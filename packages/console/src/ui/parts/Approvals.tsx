/**
 * The approvals of a question an approval policy governs, above the answer: how many of the
 * required approvals are in and whose (`1 of 2: alice`), who may approve, and where the signed-in
 * reviewer stands (approved already, not listed) before they click.
 */
import type { InterruptApproval } from "@rein/client";
import { HOLD_NOTE_ID, policyText, progressText, shortName, type Standing } from "../approval.ts";

/** The panel; nothing for a question no policy governs. */
export function ApprovalPanel(props: {
  approval: InterruptApproval | undefined;
  standing: Standing;
}) {
  const { approval, standing } = props;
  if (!approval) return null;
  return (
    <section className="approvals" aria-labelledby="approvals-title">
      <h2 id="approvals-title">Approvals</h2>
      <p>
        <strong className="progress" data-testid="approval-progress">
          {progressText(approval)}
        </strong>{" "}
        <span className="policy">
          — this question {policyText(approval.policy, approval.required)}.
        </span>
      </p>
      {approval.approvals.length > 0 && (
        <ul className="approvers" aria-label="Approved by">
          {approval.approvals.map((a) => (
            <li key={`${a.actor}/${a.at}`}>
              {shortName(a.actor)}{" "}
              <span className="muted">
                ({a.actor}, {new Date(a.at).toLocaleString("en-GB", { timeZone: "UTC" })} UTC)
              </span>
            </li>
          ))}
        </ul>
      )}
      {standing.kind !== "free" && (
        <p role="note" className="standing" id={HOLD_NOTE_ID}>
          {standing.note}
        </p>
      )}
    </section>
  );
}
