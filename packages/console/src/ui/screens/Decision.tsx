/**
 * The decision screen: one pending interrupt, where it sits in the run tree, why the agent asks,
 * the steering box, then the answer — a decision card (accept / edit / respond / ignore where
 * `allow` permits) or a question's answer editor. Every answer carries `expectedCheckpointId`; a
 * refused stale answer shows what changed and lets the reviewer decide again. The queue's split
 * view shows the same screen beside the list (`embedded`).
 */
import { useCallback, useEffect, useState } from "react";
import type { InterruptListItem, RunResult, Thread } from "@rein/client";
import { refusal, sendAnswer, steerOnly, type Refusal } from "../answering.ts";
import { progressText, standingOf } from "../approval.ts";
import { asDecision, type DecisionKind, type DecisionPayload } from "../decision.ts";
import { describeError } from "../errors.ts";
import { deadlineText, duration, humanize, keyArgs, treePath } from "../format.ts";
import { useLiveQueue, useNow } from "../live.ts";
import { ApprovalPanel } from "../parts/Approvals.tsx";
import { ContextPanel } from "../parts/Context.tsx";
import { Id } from "../parts/Id.tsx";
import { SteeringBox, steerTargets } from "../parts/Steering.tsx";
import { href } from "../router.ts";
import type { Session } from "../session.ts";
import { Conflict } from "./Conflict.tsx";
import { DecisionCard, type Hold } from "./DecisionCard.tsx";
import { JsonAnswer } from "./JsonAnswer.tsx";

/** What the screen loaded. */
interface Loaded {
  thread: Thread;
  item: InterruptListItem | null;
  pending: InterruptListItem[];
}

/** The outcome of the last answer. */
type Outcome =
  | { kind: "sent"; text: string; result: RunResult }
  /** A partial approval: recorded, the question still pending for another approver. */
  | { kind: "approved"; text: string }
  | { kind: "steered"; text: string }
  | Refusal;

/** The decision screen (or the split view's right pane, `embedded`). */
export function Decision(props: {
  session: Session;
  threadId: string;
  interruptId: string;
  embedded?: boolean;
  /** Told what was sent (the split view keeps it in view as the pane moves on). */
  onSent?: (text: string) => void;
  /** The queue's live page, when the split view shows this screen (no feed of its own). */
  liveItems?: InterruptListItem[] | null;
}) {
  const { session, threadId, interruptId, embedded = false } = props;
  const [steering, setSteering] = useState("");
  const [target, setTarget] = useState(0);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [round, setRound] = useState(0);
  const now = useNow();
  const own = useLiveQueue(session.client, { threadId }, 200, props.liveItems === undefined);
  const liveItems = props.liveItems === undefined ? own.items : props.liveItems;

  const { loaded, loadError, reload, refresh } = useQuestion(session, threadId, interruptId);

  if (loadError)
    return (
      <p role="alert" className="error">
        {loadError}
      </p>
    );
  if (!loaded) return <p className="loading">Loading…</p>;
  const { item, thread } = loaded;
  const targets = item ? steerTargets(item) : [];
  const chosen = targets[target] ?? targets[0];
  const note = steering.trim();

  const noteFor = chosen && note ? { text: note, to: chosen } : null;
  /** Sends `answer`; `what` restates what it carries (the amount of an accepted refund). */
  const send = (answer: unknown, label: string, what = "") => {
    if (!item) return;
    setBusy(true);
    setOutcome(null);
    sendAnswer(session.client, item, answer, noteFor)
      .then(async (result) => {
        const noted = noteFor ? ` Your note went to ${noteFor.to.label}.` : "";
        setSteering("");
        // Under a policy the answer may be one approval of several: the question stays pending.
        const still = item.approval ? (await refresh())?.item : null;
        if (still?.approval) {
          const text = `Your approval of ${title} is recorded (${progressText(still.approval)}); it applies when enough approvers have approved.${noted}`;
          setOutcome({ kind: "approved", text });
          setRound((r) => r + 1);
          props.onSent?.(text);
          return;
        }
        const text = `${label} sent for ${title}${what ? ` (${what})` : ""} on thread ${threadId}.${noted}`;
        setOutcome({ kind: "sent", text, result });
        props.onSent?.(`${text} The thread is now ${result.status}.`);
      })
      .catch(async (error: unknown) => {
        const refused = await refusal(session.client, item, error);
        setOutcome(refused);
        // The policy's answer may be news (another approver was quicker): show the state now.
        if (refused.kind === "refused") {
          setRound((r) => r + 1);
          await refresh();
        }
      })
      .finally(() => setBusy(false));
  };

  const steerAlone = () => {
    if (!item || !noteFor) return;
    setBusy(true);
    steerOnly(session.client, item, noteFor)
      .then(() => {
        const text = `Steering note recorded for ${noteFor.to.label}; nothing was answered.`;
        setOutcome({ kind: "steered", text });
        setSteering("");
      })
      .catch((error: unknown) => setOutcome({ kind: "error", text: describeError(error) }))
      .finally(() => setBusy(false));
  };

  const decision = item ? asDecision(item.payload) : null;
  // The live feed carries approvals made elsewhere; the loaded record covers the first paint.
  const approval = liveItems?.find((i) => i.id === item?.id)?.approval ?? item?.approval;
  const standing = standingOf(approval, session.me);
  const hold: Hold =
    standing.kind === "not_listed" ? "all" : standing.kind === "approved" ? "approve" : "none";
  // The live feed says the question left the queue while this screen was open (answered by
  // someone else, cancelled, timed out): say so before the reviewer spends time on it.
  const goneElsewhere =
    item !== null &&
    outcome === null &&
    liveItems !== null &&
    !liveItems.some((i) => i.id === item.id);
  const answered = outcome?.kind === "sent" || outcome?.kind === "conflict";
  const Title = embedded ? "h2" : "h1";
  const title = item ? (decision ? humanize(decision.action) : "Question") : "No longer pending";

  return (
    <section aria-labelledby="decision-title" className="decision">
      {!embedded && (
        <p className="crumbs">
          <a href={href({ screen: "queue" })}>Queue</a> ›{" "}
          <a href={href({ screen: "thread", threadId })} className="crumb-id" title={threadId}>
            Thread {threadId}
          </a>
        </p>
      )}
      <Title id="decision-title">{title}</Title>
      {!item && !outcome && (
        <>
          <p role="status">
            This question is not pending any more: it was answered, cancelled or timed out. The
            thread is {thread.status}.
          </p>
          <PendingList items={loaded.pending} />
        </>
      )}
      {item && (
        <>
          <p className="where">
            <span className="path">{treePath(item)}</span>
            <span>asked {duration(now - Date.parse(item.createdAt))} ago</span>
            <span>deadline {deadlineText(item.deadline, now)}</span>
            {embedded && (
              <a href={href({ screen: "decision", threadId, interruptId: item.id })}>
                Open on its own page
              </a>
            )}
          </p>
          <details className="ids">
            <summary>Ids</summary>
            <dl className="meta">
              <Meta term="Thread" value={threadId} />
              <Meta term="Interrupt" value={item.id} />
              <Meta term="Node" value={item.node} />
              <Meta term="Task" value={item.taskId} />
              <Meta term="Sub-agent" value={item.subAgentId ?? "—"} />
              <Meta term="Checkpoint" value={item.checkpointId} />
            </dl>
          </details>
          {goneElsewhere && (
            <p role="status" className="conflict-soon">
              This question left the queue since you opened it (answered elsewhere, cancelled or
              timed out). An answer sent now will be refused with the latest state.
            </p>
          )}
          <ApprovalPanel approval={approval} standing={standing} />
          {!answered &&
            (decision ? (
              <DecisionCard
                // An approval recorded or refused here starts the card afresh (no open
                // confirmation); one made elsewhere leaves an open confirmation to the server.
                key={round}
                decision={decision}
                schema={item.answerSchema}
                busy={busy}
                hold={hold}
                onAnswer={(answer, kind: DecisionKind) =>
                  send(answer, LABELS[kind], sentArgs(kind, answer, decision))
                }
              />
            ) : (
              <JsonAnswer
                payload={item.payload}
                schema={item.answerSchema}
                busy={busy || hold !== "none"}
                onAnswer={(answer) => send(answer, "Answer")}
              />
            ))}
          {/* What is decided leads; why the agent asks and the note follow it. */}
          {decision && (
            <ContextPanel
              context={decision.context}
              description={decision.description}
              client={session.client}
              threadId={threadId}
            />
          )}
          {!answered && (
            <SteeringBox
              targets={targets}
              target={target}
              onTarget={setTarget}
              text={steering}
              onText={setSteering}
              busy={busy}
              onSteerOnly={steerAlone}
            />
          )}
        </>
      )}
      <OutcomeView
        outcome={outcome}
        threadId={threadId}
        onDecideAgain={() => {
          setOutcome(null);
          reload();
        }}
      />
    </section>
  );
}

/** The thread and its pending questions, this one among them (or not, once answered). */
function useQuestion(session: Session, threadId: string, interruptId: string) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const load = useCallback(async (): Promise<Loaded | null> => {
    try {
      const [thread, page] = await Promise.all([
        session.client.getThread(threadId),
        session.client.listInterrupts({ threadId, limit: 500 }),
      ]);
      const item = page.items.find((i) => i.id === interruptId) ?? null;
      const next = { thread, item, pending: page.items };
      setLoaded(next);
      setLoadError(null);
      return next;
    } catch (error) {
      setLoadError(describeError(error));
      return null;
    }
  }, [session.client, threadId, interruptId]);
  useEffect(() => {
    void load();
  }, [load]);
  const reload = () => {
    setLoaded(null);
    void load();
  };
  return { loaded, loadError, reload, refresh: load };
}

/**
 * The key arguments an accept or an edit carries, as the notice restates them (`amount $60.00,
 * orderId 1042`): a reviewer sees what went, not only that something did.
 */
function sentArgs(kind: DecisionKind, answer: unknown, decision: DecisionPayload): string {
  const args =
    kind === "accept"
      ? decision.args
      : kind === "edit" && typeof answer === "object" && answer !== null
        ? ((answer as { args?: Record<string, unknown> }).args ?? {})
        : null;
  if (!args) return "";
  return keyArgs(args, decision.units)
    .map((a) => `${a.name} ${a.text}`)
    .join(", ");
}

const LABELS: Record<DecisionKind, string> = {
  accept: "Acceptance",
  edit: "Edited arguments",
  respond: "Response",
  ignore: "Ignore",
};

function OutcomeView(props: {
  outcome: Outcome | null;
  threadId: string;
  onDecideAgain: () => void;
}) {
  const { outcome, threadId } = props;
  if (!outcome) return null;
  if (outcome.kind === "sent")
    return (
      <div role="status" className="notice">
        <p>
          {outcome.text} The thread is now <strong>{outcome.result.status}</strong>
          {outcome.result.interrupts.length > 0
            ? `, with ${outcome.result.interrupts.length} question(s) still pending.`
            : "."}
        </p>
        <p>
          <a href={href({ screen: "queue" })}>Back to the queue</a> ·{" "}
          <a href={href({ screen: "thread", threadId })}>Open the thread</a>
        </p>
      </div>
    );
  if (outcome.kind === "steered" || outcome.kind === "approved")
    return (
      <p role="status" className="notice">
        {outcome.text}
      </p>
    );
  if (outcome.kind === "error" || outcome.kind === "refused")
    return (
      <p role="alert" className="error">
        {outcome.text}
      </p>
    );
  return <Conflict info={outcome.info} threadId={threadId} onDecideAgain={props.onDecideAgain} />;
}

function Meta({ term, value }: { term: string; value: string }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>
        <Id value={value} label={`${term} id`} />
      </dd>
    </div>
  );
}

/** Links to the interrupts pending in this thread now. */
export function PendingList({ items }: { items: InterruptListItem[] }) {
  if (items.length === 0) return <p>Nothing else is pending in this thread.</p>;
  return (
    <>
      <h2>Pending in this thread now</h2>
      <ul className="pending-now">
        {items.map((i) => (
          <li key={i.id}>
            <a href={href({ screen: "decision", threadId: i.threadId, interruptId: i.id })}>
              {treePath(i)}
            </a>
          </li>
        ))}
      </ul>
    </>
  );
}
