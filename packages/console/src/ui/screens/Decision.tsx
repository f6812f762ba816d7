/**
 * The decision screen: one pending interrupt, shown where it sits in the run tree, answered as a
 * decision card (accept / edit / respond / ignore where `allow` permits) or with a JSON answer,
 * and a separate steering box. Every answer carries `expectedCheckpointId`; a refused stale
 * answer shows what changed and lets the reviewer decide again.
 */
import { useCallback, useEffect, useState } from "react";
import { ReinApiError, type InterruptListItem, type RunResult, type Thread } from "@rein/client";
import { asDecision, type DecisionKind } from "../decision.ts";
import { describeError } from "../errors.ts";
import { deadlineText, duration, shortId, treePath } from "../format.ts";
import { useLiveQueue, useNow } from "../live.ts";
import { href } from "../router.ts";
import type { Session } from "../session.ts";
import { Conflict, type ConflictInfo } from "./Conflict.tsx";
import { DecisionCard } from "./DecisionCard.tsx";
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
  | { kind: "steered"; text: string }
  | { kind: "conflict"; info: ConflictInfo }
  | { kind: "error"; text: string };

/** The decision screen. */
export function Decision(props: { session: Session; threadId: string; interruptId: string }) {
  const { session, threadId, interruptId } = props;
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [steering, setSteering] = useState("");
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const now = useNow();
  const live = useLiveQueue(session.client, { threadId });

  const load = useCallback(async () => {
    try {
      const [thread, page] = await Promise.all([
        session.client.getThread(threadId),
        session.client.listInterrupts({ threadId, limit: 200 }),
      ]);
      setLoaded({
        thread,
        item: page.items.find((i) => i.id === interruptId) ?? null,
        pending: page.items,
      });
      setLoadError(null);
    } catch (error) {
      setLoadError(describeError(error));
    }
  }, [session.client, threadId, interruptId]);

  useEffect(() => {
    void load();
  }, [load]);

  if (loadError)
    return (
      <p role="alert" className="error">
        {loadError}
      </p>
    );
  if (!loaded) return <p className="loading">Loading…</p>;
  const { item, thread } = loaded;

  const send = (answer: unknown, label: string) => {
    if (!item) return;
    setBusy(true);
    setOutcome(null);
    session.client
      .resume(threadId, {
        target: { runId: item.runId, namespace: item.namespace, interruptId: item.id },
        resume: answer,
        ...(steering.trim() ? { steering: steering.trim() } : {}),
        expectedCheckpointId: item.checkpointId,
      })
      .then((result) => {
        setOutcome({ kind: "sent", text: `${label} sent.`, result });
        setSteering("");
      })
      .catch((error: unknown) => {
        if (error instanceof ReinApiError && error.status === 409)
          setOutcome({ kind: "conflict", info: conflictInfo(error, item) });
        else setOutcome({ kind: "error", text: describeError(error) });
      })
      .finally(() => setBusy(false));
  };

  const steerOnly = () => {
    if (!item || !steering.trim()) return;
    setBusy(true);
    session.client
      .steer(threadId, {
        target: { runId: item.runId, namespace: item.namespace, interruptId: item.id },
        text: steering.trim(),
      })
      .then(() => {
        setOutcome({ kind: "steered", text: "Steering note recorded; nothing was answered." });
        setSteering("");
      })
      .catch((error: unknown) => setOutcome({ kind: "error", text: describeError(error) }))
      .finally(() => setBusy(false));
  };

  const decision = item ? asDecision(item.payload) : null;
  // The live feed says the question left the queue while this screen was open (answered by
  // someone else, cancelled, timed out): say so before the reviewer spends time on it.
  const goneElsewhere =
    item !== null &&
    outcome === null &&
    live.items !== null &&
    !live.items.some((i) => i.id === item.id);
  const answered = outcome?.kind === "sent" || outcome?.kind === "conflict";

  return (
    <section aria-labelledby="decision-title" className="decision">
      <p className="crumbs">
        <a href={href({ screen: "queue" })}>Queue</a> ›{" "}
        <a href={href({ screen: "thread", threadId })}>Thread {threadId}</a>
      </p>
      <h1 id="decision-title">{item ? treePath(item) : "No longer pending"}</h1>
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
          <dl className="meta">
            <Meta term="Thread" value={threadId} />
            <Meta term="Node" value={item.node} />
            <Meta term="Task" value={item.taskId} />
            <Meta term="Sub-agent" value={item.subAgentId ?? "—"} />
            <Meta term="Checkpoint" value={item.checkpointId} />
            <Meta term="Age" value={duration(now - Date.parse(item.createdAt))} />
            <Meta term="Deadline" value={deadlineText(item.deadline, now)} />
          </dl>
          {goneElsewhere && (
            <p role="status" className="conflict-soon">
              This question left the queue since you opened it (answered elsewhere, cancelled or
              timed out). An answer sent now will be refused with the latest state.
            </p>
          )}
          {!answered &&
            (decision ? (
              <DecisionCard
                decision={decision}
                schema={item.answerSchema}
                busy={busy}
                onAnswer={(answer, kind: DecisionKind) => send(answer, LABELS[kind])}
              />
            ) : (
              <JsonAnswer
                payload={item.payload}
                schema={item.answerSchema}
                busy={busy}
                onAnswer={(answer) => send(answer, "Answer")}
              />
            ))}
          {!answered && (
            <section className="steering" aria-labelledby="steering-title">
              <h2 id="steering-title">Steering</h2>
              <p className="hint">
                An instruction for the agent, kept apart from the answer. It is sent with your
                answer, or on its own without answering.
              </p>
              <label htmlFor="steering-note">Steering note</label>
              <textarea
                id="steering-note"
                rows={3}
                maxLength={10_000}
                value={steering}
                onChange={(e) => setSteering(e.target.value)}
              />
              <button type="button" disabled={busy || !steering.trim()} onClick={steerOnly}>
                Steer without answering
              </button>
            </section>
          )}
        </>
      )}
      {outcome?.kind === "sent" && (
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
      )}
      {outcome?.kind === "steered" && (
        <p role="status" className="notice">
          {outcome.text}
        </p>
      )}
      {outcome?.kind === "error" && (
        <p role="alert" className="error">
          {outcome.text}
        </p>
      )}
      {outcome?.kind === "conflict" && (
        <Conflict
          info={outcome.info}
          threadId={threadId}
          onDecideAgain={() => {
            setOutcome(null);
            setLoaded(null);
            void load();
          }}
        />
      )}
    </section>
  );
}

const LABELS: Record<DecisionKind, string> = {
  accept: "Acceptance",
  edit: "Edited arguments",
  respond: "Response",
  ignore: "Ignore",
};

function Meta({ term, value }: { term: string; value: string }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd title={value}>{value.length > 28 ? shortId(value, 26) : value}</dd>
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

/** What a 409 says changed. */
function conflictInfo(error: ReinApiError, item: InterruptListItem): ConflictInfo {
  const d = error.details;
  const latest = (
    typeof d["latest"] === "object" && d["latest"] !== null ? d["latest"] : {}
  ) as Record<string, unknown>;
  const pick = (key: string): unknown => d[key] ?? latest[key];
  const pending = pick("pendingInterrupts");
  return {
    message: describeError(error),
    reason: typeof d["reason"] === "string" ? d["reason"] : null,
    expectedCheckpointId: item.checkpointId,
    headCheckpointId:
      typeof pick("headCheckpointId") === "string" ? (pick("headCheckpointId") as string) : null,
    runStatus: typeof pick("runStatus") === "string" ? (pick("runStatus") as string) : null,
    pending: Array.isArray(pending) ? (pending as ConflictInfo["pending"]) : [],
  };
}
