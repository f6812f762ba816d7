/**
 * One question of the queue, read like a mail: what is asked, with its key arguments (money
 * first, formatted), then where it comes from (app › sub-agent › node), its age and deadline;
 * the ids the spec requires are one toggle away.
 */
import type { InterruptApproval, InterruptListItem } from "@rein/client";
import { progressText } from "../approval.ts";
import { asDecision } from "../decision.ts";
import { escalationBadge } from "../escalation.ts";
import {
  deadlineText,
  duration,
  humanize,
  keyArgs,
  kindOf,
  payloadSummary,
  treePath,
} from "../format.ts";
import { href } from "../router.ts";
import { Id } from "./Id.tsx";

/** The row. */
export function QueueRow(props: {
  item: InterruptListItem;
  selected: boolean;
  /** Checked for a bulk decision. */
  checked: boolean;
  now: number;
  onSelect: () => void;
  onCheck: (checked: boolean) => void;
}) {
  const { item, selected, now } = props;
  const decision = asDecision(item.payload);
  const ask = decision ? humanize(decision.action) : payloadSummary(item.payload, 90);
  const args = decision ? keyArgs(decision.args, decision.units) : [];
  const where = treePath(item);
  const escalated = escalationBadge(item.escalation);
  return (
    <li
      id={`row-${item.id}`}
      className={selected ? "row selected" : "row"}
      aria-current={selected || undefined}
      data-interrupt-id={item.id}
      onClick={props.onSelect}
    >
      <p className="row-ask">
        <input
          type="checkbox"
          className="pick"
          checked={props.checked}
          aria-label={`Select ${ask} on thread ${item.threadId}`}
          onClick={(e) => e.stopPropagation()}
          onChange={(e) => props.onCheck(e.target.checked)}
        />
        <a
          href={href({ screen: "decision", threadId: item.threadId, interruptId: item.id })}
          aria-label={`${ask}: ${where} on thread ${item.threadId}`}
        >
          {ask}
        </a>
        {decision?.irreversible && <span className="badge irreversible">irreversible</span>}
        {item.approval && <ApprovalBadge approval={item.approval} />}
        {escalated && (
          <span className={`badge escalation ${escalated.text}`} title={escalated.title}>
            {escalated.text}
          </span>
        )}
        <span className="kind">{kindOf(item)}</span>
      </p>
      {args.length > 0 && (
        <p className="row-args">
          {args.map((a) => (
            <span key={a.name}>
              <span className="arg-name">{a.name}</span> {a.text}
            </span>
          ))}
        </p>
      )}
      <p className="row-where">
        <span className="path">{where}</span>
        <span>{duration(now - Date.parse(item.createdAt))} ago</span>
        <span>deadline {deadlineText(item.deadline, now)}</span>
      </p>
      <RowIds item={item} />
    </li>
  );
}

/** `1 of 2: alice`: the approvals an approval policy counts so far. */
function ApprovalBadge({ approval }: { approval: InterruptApproval }) {
  return (
    <span
      className="badge approvals"
      title={`Approvals so far of the ${approval.required} required`}
    >
      {approval.approvals.length > 0
        ? progressText(approval)
        : `needs ${approval.required} approval${approval.required === 1 ? "" : "s"}`}
    </span>
  );
}

/** The ids the spec requires, one toggle away. */
function RowIds({ item }: { item: InterruptListItem }) {
  return (
    <details className="row-ids">
      <summary>Ids</summary>
      <dl>
        <Field term="Thread">
          <Id
            value={item.threadId}
            label="Thread id"
            href={href({ screen: "thread", threadId: item.threadId })}
          />
        </Field>
        <Field term="Node">{item.node}</Field>
        <Field term="Task">
          <Id value={item.taskId} label="Task id" />
        </Field>
        <Field term="Sub-agent">
          {item.subAgentId ? <Id value={item.subAgentId} label="Sub-agent id" /> : "—"}
        </Field>
        <Field term="Checkpoint">
          <Id value={item.checkpointId} label="Checkpoint id" />
        </Field>
      </dl>
    </details>
  );
}

function Field({ term, children }: { term: string; children: React.ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}
