/**
 * Whether a thread's audit log verifies: the server re-computes its hash chain
 * (`GET /audit/verify`) and this says so in words, naming the first broken entry when it does not.
 */
import type { AuditBreakReason, AuditVerification } from "@rein/client";

/** What each break means, for a person reading the thread. */
const REASONS: Record<AuditBreakReason, string> = {
  hash_mismatch: "its content was changed after it was written",
  broken_link: "it no longer links to the entry before it",
  missing: "an entry before it was deleted",
  out_of_order: "it is not where its position says (reordered or forged)",
  unchained: "it carries no chain fields (forged or erased)",
  truncated: "the newest entries were deleted (the signed head is past the end)",
  seal_mismatch: "the entries were rewritten since the head was signed",
  bad_signature: "the signed head does not verify with the server's key",
};

function entries(n: number): string {
  return `${n} ${n === 1 ? "entry" : "entries"}`;
}

/** The chain's verdict above the audit table; nothing while there is nothing to check. */
export function AuditChainStatus({ result }: { result: AuditVerification | null | undefined }) {
  if (result === undefined) return null;
  if (result === null)
    return <p className="hint">The audit chain could not be checked (the server did not say).</p>;
  if (result.ok) {
    if (result.checked === 0 && result.legacy === 0) return null;
    const legacy =
      result.legacy > 0 ? ` · ${entries(result.legacy)} written before the chain began` : "";
    const signed = result.signed && result.signed.checked > 0 ? " · signed head checked" : "";
    return (
      <p role="status" className="chain chain-ok">
        Audit chain verified: {entries(result.checked)}
        {legacy}
        {signed}
      </p>
    );
  }
  const broken = result.firstBroken;
  const at = broken?.n != null ? `entry ${broken.n}` : "an entry";
  return (
    <p role="alert" className="chain chain-broken">
      Audit chain broken at {at}
      {broken?.id ? ` (record ${broken.id})` : ""}:{" "}
      {broken ? REASONS[broken.reason] : "it does not verify"}.
    </p>
  );
}
