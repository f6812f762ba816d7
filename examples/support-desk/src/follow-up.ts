/**
 * The follow-up graph of `npm start -- --notify-demo`: "call the customer back?", asked of
 * support with an escalation ladder — reminded after T1, escalated to finance after T2, declined
 * by default after T3 — so the demo shows a question nobody answers going up the ladder.
 */
import { END, START, StateGraph, lastValue, type Checkpointer } from "@rein/core";
import { z } from "zod";

/** The answers the question takes: call back, or not. */
export const followUpAnswer = z.discriminatedUnion("type", [
  z.object({ type: z.literal("accept") }),
  z.object({ type: z.literal("ignore") }),
]);

/** The ladder's three steps, in seconds after the question. */
export interface FollowUpLadder {
  remind: number;
  escalate: number;
  timeout: number;
}

/**
 * The ladder from `REIN_DEMO_LADDER` (`"remind,escalate,timeout"` in seconds; default
 * `"30,60,90"`, so a person watching sees each step within two minutes).
 *
 * @throws Error when the variable is not three increasing positive numbers.
 */
export function followUpLadder(
  text = process.env["REIN_DEMO_LADDER"] ?? "30,60,90",
): FollowUpLadder {
  const [remind, escalate, timeout] = text.split(",").map(Number);
  if (
    remind === undefined ||
    escalate === undefined ||
    timeout === undefined ||
    !(remind > 0 && escalate > remind && timeout > escalate)
  )
    throw new Error(
      `REIN_DEMO_LADDER must be three increasing numbers of seconds, e.g. "30,60,90"; got "${text}".`,
    );
  return { remind, escalate, timeout };
}

/** The follow-up graph on `store`. */
export function createFollowUp(store: Checkpointer, ladder = followUpLadder()) {
  return new StateGraph({
    ticket: lastValue<string>(() => "T-1042"),
    outcome: lastValue<string>(() => ""),
  })
    .addNode("ask", (s, ctx) => {
      const decision = ctx.interrupt(
        {
          action: "call_back",
          args: { ticket: s.ticket, phone: "+1 555 0100" },
          description: `Call the customer of ticket ${s.ticket} back about the late refund?`,
          allow: { accept: true, edit: false, respond: false, ignore: true },
        },
        {
          answer: followUpAnswer,
          approvers: { groups: ["support"] },
          remind: `${ladder.remind}s`,
          escalate: { after: `${ladder.escalate}s`, approvers: { groups: ["finance"] } },
          timeout: `${ladder.timeout}s`,
          // Nobody answered: no call is made (a person can still call from the ticket).
          onTimeout: { type: "ignore" },
        },
      );
      return { outcome: decision.type === "accept" ? "call scheduled" : "no call" };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: store, name: "follow-up" });
}
