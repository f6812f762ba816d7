/**
 * A refund under four eyes for the browser tests: a refund over $1,000 needs two approvers from
 * `finance`, not the requester (a declarative rule over the payload); a smaller one needs nobody
 * in particular. The refund is irreversible, so approving it in bulk asks for a confirmation.
 */
import { END, START, StateGraph, lastValue, type Checkpointer } from "@rein/core";
import { z } from "zod";

const decision = z.discriminatedUnion("type", [
  z.object({ type: z.literal("accept") }),
  z.object({ type: z.literal("ignore") }),
]);

/** The `governed` graph: input `{ amount }`, one refund decision, then the outcome. */
export function governed(store: Checkpointer) {
  return new StateGraph({
    amount: lastValue<number>(() => 0),
    outcome: lastValue<string>(() => ""),
  })
    .addNode("approve", (s, ctx) => {
      const answer = ctx.interrupt(
        {
          action: "issue_refund",
          args: { orderId: "2001", amount: s.amount },
          description: `Refund $${s.amount} on order 2001?`,
          allow: { accept: true, edit: false, respond: false, ignore: true },
          irreversible: true,
          units: { amount: "USD" },
        },
        {
          answer: decision,
          approvers: {
            when: { path: "args.amount", gt: 1000 },
            then: { groups: ["finance"], count: 2 },
          },
        },
      );
      return { outcome: answer.type === "accept" ? `refunded ${s.amount}` : "declined" };
    })
    .addEdge(START, "approve")
    .addEdge("approve", END)
    .compile({ checkpointer: store, name: "governed" });
}
