/**
 * The graph the legacy database fixtures were written with (`legacy-fixture.ts`), and the test
 * that reads them (`legacy-files.test.ts`) resumes: two approvals asked in parallel, a keyed side
 * effect (`ctx.once`) and an append-only log, so every table of the schema holds rows.
 */
import { END, START, StateGraph, append, lastValue } from "@rein/core";
import type { Checkpointer } from "@rein/core";

/** The thread the fixtures hold. */
export const LEGACY_THREAD = "legacy-1";

/** Builds the fixture graph on `checkpointer`. */
export function legacyGraph(checkpointer: Checkpointer) {
  return new StateGraph({ order: lastValue<string>(), log: append<string>() })
    .addNode("draft", async (s, ctx) => {
      const id = await ctx.once("reserve", () => `reservation-for-${s.order}`);
      return { log: `drafted ${s.order} (${id})` };
    })
    .addNode("refund", (_s, ctx) => {
      const ok = ctx.interrupt<boolean>({ question: "Refund 40 EUR?" });
      return { log: ok ? "refunded" : "refund declined" };
    })
    .addNode("email", (_s, ctx) => {
      const text = ctx.interrupt<string>({ question: "Send this email?" });
      return { log: `emailed: ${text}` };
    })
    .addEdge(START, "draft")
    .addEdge("draft", "refund")
    .addEdge("draft", "email")
    .addEdge("refund", END)
    .addEdge("email", END)
    .compile({ checkpointer });
}
