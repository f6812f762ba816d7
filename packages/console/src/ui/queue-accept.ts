/**
 * The queue's `a` key: accepts a decision as the agent asked it, where its payload allows an
 * accept and the action can be undone; otherwise it says why the reviewer must open it.
 */
import type { InterruptListItem } from "@rein/client";
import { asDecision, decisionAnswer } from "./decision.ts";
import { describeError } from "./errors.ts";
import { humanize } from "./format.ts";
import type { Session } from "./session.ts";

/** A line the queue shows above the list: news (`error` false) or a refusal. */
export interface Notice {
  text: string;
  error: boolean;
}

/** Accepts a decision from the queue (the `a` key), saying why when it may not. */
export function acceptFromQueue(
  session: Session,
  item: InterruptListItem,
  setNotice: (notice: Notice) => void,
): void {
  const decision = asDecision(item.payload);
  if (!decision?.allow.accept) {
    setNotice({ text: "This one cannot be accepted as is; open it to answer.", error: true });
    return;
  }
  if (decision.irreversible) {
    setNotice({
      text: `${humanize(decision.action)} cannot be undone, so the a key does not accept it: open it and confirm.`,
      error: true,
    });
    return;
  }
  setNotice({ text: `Accepting ${humanize(decision.action)}…`, error: false });
  session.client
    .resume(item.threadId, {
      target: { runId: item.runId, namespace: item.namespace, interruptId: item.id },
      resume: decisionAnswer("accept"),
      expectedCheckpointId: item.checkpointId,
    })
    .then((result) =>
      setNotice({
        text: `Accepted ${humanize(decision.action)} on thread ${item.threadId}; the thread is now ${result.status}.`,
        error: false,
      }),
    )
    .catch((error: unknown) => setNotice({ text: describeError(error), error: true }));
}
