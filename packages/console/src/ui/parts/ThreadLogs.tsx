/**
 * The thread's records over time: the checkpoint history as a timeline, the steering notes with
 * their authors, and the audit log with the chain's verdict (the row where it breaks marked).
 */
import type { AuditRecord, AuditVerification, StateSnapshot } from "@rein/client";
import { payloadSummary, shortId } from "../format.ts";
import { AuditChainStatus } from "./AuditChain.tsx";
import { Id } from "./Id.tsx";
import { LogTable } from "./LogTable.tsx";

const time = (at: string | null) => (at ? new Date(at).toLocaleTimeString() : "");

/** The checkpoint history, newest first. */
export function HistoryTimeline({ history }: { history: StateSnapshot[] }) {
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">Checkpoint history</h2>
      <ol className="timeline" aria-label="Checkpoints, newest first">
        {history.map((h) => (
          <li key={h.checkpointId ?? h.step}>
            <span className="when">{time(h.createdAt)}</span> step {h.step} · {h.source ?? "—"}
            {h.next.length > 0 && <> · next {h.next.join(", ")}</>}
            {h.interrupts.length > 0 && <> · {h.interrupts.length} pending</>}
            <code title={h.checkpointId ?? ""}>{shortId(h.checkpointId, 20)}</code>
          </li>
        ))}
      </ol>
    </section>
  );
}

function textOf(data: unknown): string {
  if (
    typeof data === "object" &&
    data !== null &&
    typeof (data as { text?: unknown }).text === "string"
  )
    return (data as { text: string }).text;
  return JSON.stringify(data);
}

/** The steering notes of the audit log, with who wrote each. */
export function SteeringLog({ audit }: { audit: AuditRecord[] }) {
  const steering = audit.filter((a) => a.action === "steer");
  return (
    <section aria-labelledby="steering-log-title">
      <h2 id="steering-log-title">Steering log</h2>
      {steering.length === 0 ? (
        <p>No steering yet.</p>
      ) : (
        <ul className="log" aria-label="Steering notes">
          {steering.map((a) => (
            <li key={a.id}>
              <strong>{a.actor}</strong>: “{textOf(a.data)}”{" "}
              <span className="when">{time(a.createdAt)}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The audit log, oldest first, under the chain's verdict. */
export function AuditLog(props: { audit: AuditRecord[]; chain: AuditVerification | null }) {
  const { audit, chain } = props;
  const brokenId = chain?.ok === false ? (chain.firstBroken?.id ?? null) : null;
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <AuditChainStatus result={chain} />
      {audit.length === 0 ? (
        <p>Nothing recorded yet.</p>
      ) : (
        <LogTable
          label="Audit log, oldest first"
          columns={["When", "Action", "Actor", "Interrupt", "Detail"]}
        >
          {audit.map((a) => (
            <AuditRow key={a.id} record={a} broken={a.id === brokenId} />
          ))}
        </LogTable>
      )}
    </section>
  );
}

function AuditRow({ record: a, broken }: { record: AuditRecord; broken: boolean }) {
  return (
    <tr className={broken ? "broken" : undefined}>
      <td data-label="When">{time(a.createdAt)}</td>
      <td data-label="Action">
        {a.action}
        {broken && <strong className="broken-mark"> · chain broken here</strong>}
      </td>
      <td data-label="Actor">{a.actor}</td>
      <td data-label="Interrupt">
        {a.interruptId ? <Id value={a.interruptId} label="Interrupt id" /> : "—"}
      </td>
      <td data-label="Detail">
        <code>{payloadSummary(a.data, 120)}</code>
      </td>
    </tr>
  );
}
