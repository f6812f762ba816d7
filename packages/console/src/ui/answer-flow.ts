/**
 * What the decision screen does with an answer: sends it (with the steering note, if any) and
 * tells the outcome — sent, one approval of several recorded, refused, or a conflict to decide
 * again — or records the note alone. Holds the note, its target, the busy flag and the outcome.
 */
import { useState } from "react";
import type { InterruptListItem, RunResult } from "@rein/client";
import { refusal, sendAnswer, steerOnly, type Refusal } from "./answering.ts";
import { progressText } from "./approval.ts";
import { describeError } from "./errors.ts";
import { steerTargets, type SteerTarget } from "./parts/Steering.tsx";
import type { Session } from "./session.ts";

/** The outcome of the last answer. */
export type Outcome =
  | { kind: "sent"; text: string; result: RunResult }
  /** A partial approval: recorded, the question still pending for another approver. */
  | { kind: "approved"; text: string }
  | { kind: "steered"; text: string }
  | Refusal;

/** The question being answered, and what the screen is told of it. */
export interface AnswerContext {
  session: Session;
  threadId: string;
  /** The pending question (null: none, nothing can be sent). */
  item: InterruptListItem | null;
  /** How the question is named in the notices (`Issue refund`). */
  title: string;
  /** Reads the question again: it stays pending after a partial approval. */
  refresh: () => Promise<{ item: InterruptListItem | null } | null>;
  /** Told what was sent. */
  onSent?: (text: string) => void;
}

/** The answer flow of one question. */
export interface AnswerFlow {
  steering: string;
  setSteering: (text: string) => void;
  targets: SteerTarget[];
  target: number;
  setTarget: (index: number) => void;
  busy: boolean;
  outcome: Outcome | null;
  clearOutcome: () => void;
  /** Bumped when an approval is recorded or refused here: the card starts afresh. */
  round: number;
  /** Sends `answer`; `what` restates what it carries (the amount of an accepted refund). */
  send: (answer: unknown, label: string, what?: string) => void;
  /** Records the steering note alone, answering nothing. */
  steerAlone: () => void;
}

/** The answer flow for `ctx.item`. */
export function useAnswerFlow(ctx: AnswerContext): AnswerFlow {
  const { session, threadId, item, title } = ctx;
  const [steering, setSteering] = useState("");
  const [target, setTarget] = useState(0);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [round, setRound] = useState(0);
  const targets = item ? steerTargets(item) : [];
  const chosen = targets[target] ?? targets[0];
  const note = steering.trim();
  const noteFor = chosen && note ? { text: note, to: chosen } : null;

  const sent = async (item: InterruptListItem, result: RunResult, label: string, what: string) => {
    const noted = noteFor ? ` Your note went to ${noteFor.to.label}.` : "";
    setSteering("");
    // Under a policy the answer may be one approval of several: the question stays pending.
    const still = item.approval ? (await ctx.refresh())?.item : null;
    if (still?.approval) {
      const text = `Your approval of ${title} is recorded (${progressText(still.approval)}); it applies when enough approvers have approved.${noted}`;
      setOutcome({ kind: "approved", text });
      setRound((r) => r + 1);
      ctx.onSent?.(text);
      return;
    }
    const text = `${label} sent for ${title}${what ? ` (${what})` : ""} on thread ${threadId}.${noted}`;
    setOutcome({ kind: "sent", text, result });
    ctx.onSent?.(`${text} The thread is now ${result.status}.`);
  };

  const refused = async (item: InterruptListItem, error: unknown) => {
    const why = await refusal(session.client, item, error);
    setOutcome(why);
    // The policy's answer may be news (another approver was quicker): show the state now.
    if (why.kind === "refused") {
      setRound((r) => r + 1);
      await ctx.refresh();
    }
  };

  const send = (answer: unknown, label: string, what = "") => {
    if (!item) return;
    setBusy(true);
    setOutcome(null);
    sendAnswer(session.client, item, answer, noteFor)
      .then((result) => sent(item, result, label, what))
      .catch((error: unknown) => refused(item, error))
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

  return {
    steering,
    setSteering,
    targets,
    target,
    setTarget,
    busy,
    outcome,
    clearOutcome: () => setOutcome(null),
    round,
    send,
    steerAlone,
  };
}
