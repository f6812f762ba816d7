/**
 * The decision screen: one pending interrupt, where it sits in the run tree, why the agent asks,
 * the steering box, then the answer — a decision card (accept / edit / respond / ignore where
 * `allow` permits) or a question's answer editor. Every answer carries `expectedCheckpointId`; a
 * refused stale answer shows what changed and lets the reviewer decide again. The queue's split
 * view shows the same screen beside the list (`embedded`).
 */
import { useCallback, useEffect, useState } from "react";
import type { InterruptApproval, InterruptListItem, Thread } from "@rein/client";
import { useAnswerFlow, type AnswerFlow } from "../answer-flow.ts";
import { standingOf, type Standing } from "../approval.ts";
import { asDecision, type DecisionKind, type DecisionPayload } from "../decision.ts";
import { describeError } from "../errors.ts";
import { useLiveQueue, useNow } from "../live.ts";
import { ApprovalPanel } from "../parts/Approvals.tsx";
import { ContextPanel } from "../parts/Context.tsx";
import { OutcomeView } from "../parts/Outcome.tsx";
import { DecisionCrumbs, LeftTheQueue, NotPending, QuestionWhere } from "../parts/Question.tsx";
import { SteeringBox } from "../parts/Steering.tsx";
import {
  holdOf,
  LABELS,
  leftTheQueue,
  questionTitle,
  sentArgs,
  type Hold,
} from "../question-view.ts";
import type { Session } from "../session.ts";
import { DecisionCard } from "./DecisionCard.tsx";
import { JsonAnswer } from "./JsonAnswer.tsx";

/** What the screen loaded. */
interface Loaded {
  thread: Thread;
  item: InterruptListItem | null;
  pending: InterruptListItem[];
}

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
  const now = useNow();
  const own = useLiveQueue(session.client, { threadId }, 200, props.liveItems === undefined);
  const liveItems = props.liveItems === undefined ? own.items : props.liveItems;
  const { loaded, loadError, reload, refresh } = useQuestion(session, threadId, interruptId);
  const item = loaded?.item ?? null;
  const decision = item ? asDecision(item.payload) : null;
  const title = questionTitle(item, decision);
  const flow = useAnswerFlow({ session, threadId, item, title, refresh, onSent: props.onSent });

  if (loadError)
    return (
      <p role="alert" className="error">
        {loadError}
      </p>
    );
  if (!loaded) return <p className="loading">Loading…</p>;
  const { outcome } = flow;
  // The live feed carries approvals made elsewhere; the loaded record covers the first paint.
  const approval = liveItems?.find((i) => i.id === item?.id)?.approval ?? item?.approval;
  const Title = embedded ? "h2" : "h1";

  return (
    <section aria-labelledby="decision-title" className="decision">
      {!embedded && <DecisionCrumbs threadId={threadId} />}
      <Title id="decision-title">{title}</Title>
      {!item && !outcome && <NotPending thread={loaded.thread} pending={loaded.pending} />}
      {item && (
        <QuestionBody
          session={session}
          threadId={threadId}
          item={item}
          decision={decision}
          approval={approval}
          standing={standingOf(approval, session.me)}
          gone={leftTheQueue(item, outcome !== null, liveItems)}
          now={now}
          embedded={embedded}
          flow={flow}
        />
      )}
      <OutcomeView
        outcome={outcome}
        threadId={threadId}
        onDecideAgain={() => {
          flow.clearOutcome();
          reload();
        }}
      />
    </section>
  );
}

/** The pending question: where it sits, its approvals, the answer, why it asks, the note. */
function QuestionBody(props: {
  session: Session;
  threadId: string;
  item: InterruptListItem;
  decision: DecisionPayload | null;
  approval: InterruptApproval | undefined;
  standing: Standing;
  gone: boolean;
  now: number;
  embedded: boolean;
  flow: AnswerFlow;
}) {
  const { session, threadId, item, decision, flow } = props;
  const answered = flow.outcome?.kind === "sent" || flow.outcome?.kind === "conflict";
  return (
    <>
      <QuestionWhere item={item} threadId={threadId} now={props.now} embedded={props.embedded} />
      {props.gone && <LeftTheQueue />}
      <ApprovalPanel approval={props.approval} standing={props.standing} />
      {!answered && (
        <AnswerArea item={item} decision={decision} hold={holdOf(props.standing)} flow={flow} />
      )}
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
          targets={flow.targets}
          target={flow.target}
          onTarget={flow.setTarget}
          text={flow.steering}
          onText={flow.setSteering}
          busy={flow.busy}
          onSteerOnly={flow.steerAlone}
        />
      )}
    </>
  );
}

/** The answer: the decision card for a decision payload, the JSON editor for any other. */
function AnswerArea(props: {
  item: InterruptListItem;
  decision: DecisionPayload | null;
  hold: Hold;
  flow: AnswerFlow;
}) {
  const { item, decision, hold, flow } = props;
  if (!decision)
    return (
      <JsonAnswer
        payload={item.payload}
        schema={item.answerSchema}
        busy={flow.busy || hold !== "none"}
        onAnswer={(answer) => flow.send(answer, "Answer")}
      />
    );
  return (
    <DecisionCard
      // An approval recorded or refused here starts the card afresh (no open
      // confirmation); one made elsewhere leaves an open confirmation to the server.
      key={flow.round}
      decision={decision}
      schema={item.answerSchema}
      busy={flow.busy}
      hold={hold}
      onAnswer={(answer, kind: DecisionKind) =>
        flow.send(answer, LABELS[kind], sentArgs(kind, answer, decision))
      }
    />
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
