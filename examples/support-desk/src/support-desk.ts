/**
 * The support desk (SPEC §9): a supervisor that asks which sub-agents to dispatch, then runs
 * research, then refund and email as sub-agents in parallel, briefed with research's finding.
 * Refund and email each pause for approval, at the same time; research runs through.
 */
import {
  END,
  START,
  StateGraph,
  lastAssistantText,
  lastValue,
  subAgent,
  type Checkpointer,
  type CompiledGraph,
  type Message,
} from "@rein/core";
import { z } from "zod";
import { emailAgent, refundAgent, researchAgent } from "./agents.ts";
import { DeskFiles, sampleTicket, type Ticket } from "./desk-data.ts";

/** The sub-agents the supervisor can dispatch. */
export const subAgents = ["research", "refund", "email"] as const;

/** One of {@link subAgents}. */
export type SubAgentName = (typeof subAgents)[number];

/** The reviewer's answer to the dispatch question. */
export const dispatchAnswer = z.discriminatedUnion("type", [
  z.object({ type: z.literal("accept") }),
  z.object({
    type: z.literal("edit"),
    args: z.object({ agents: z.array(z.enum(subAgents)) }),
  }),
  z.object({ type: z.literal("ignore") }),
]);

/** The supervisor's state: the ticket, the dispatch, and what each sub-agent returned. */
export const deskSchema = {
  ticket: lastValue<Ticket | null>(() => null),
  dispatch: lastValue<SubAgentName[]>(() => []),
  researchReport: lastValue<string | null>(() => null),
  refundReport: lastValue<string | null>(() => null),
  emailReport: lastValue<string | null>(() => null),
  resolution: lastValue<string | null>(() => null),
};

/** Options of {@link createSupportDesk}. */
export interface SupportDeskOptions {
  /** Where runs are stored (any checkpointer: SQLite, Postgres, memory). */
  store: Checkpointer;
  /** Folder of the payment ledger (`ledger.jsonl`) and the email outbox (`outbox/`). */
  dataDir: string;
}

/**
 * Builds the compiled `support-desk` graph. Start a run with input `{}` to work the sample
 * ticket, or `{ ticket }` for another.
 */
export function createSupportDesk(options: SupportDeskOptions): CompiledGraph<typeof deskSchema> {
  const { store } = options;
  const files = new DeskFiles(options.dataDir);
  // Each sub-agent is briefed with the ticket; refund and email also with research's finding, so
  // their approvals show the reviewer what the agent knew (the decision payload's context).
  const brief = (s: {
    ticket: Ticket | null;
    researchReport: string | null;
  }): {
    messages: Message[];
  } => {
    const t = s.ticket ?? sampleTicket;
    const ticket = `Ticket ${t.id} from ${t.customer} <${t.email}> about order ${t.orderId}: ${t.text}`;
    const finding = s.researchReport ? [`Research finding: ${s.researchReport}`] : [];
    return {
      messages: [ticket, ...finding].map((content): Message => ({ role: "user", content })),
    };
  };
  // Research first when dispatched; then the others, side by side.
  const afterResearch = (s: { dispatch: SubAgentName[] }): string[] => {
    const rest = s.dispatch.filter((a) => a !== "research");
    return rest.length > 0 ? rest : ["close"];
  };
  return new StateGraph(deskSchema)
    .addNode("intake", (s) => ({ ticket: s.ticket ?? sampleTicket }))
    .addNode("supervisor", (s, ctx) => {
      const proposed: SubAgentName[] = ["research", "refund", "email"];
      const decision = ctx.interrupt(
        {
          action: "dispatch",
          args: { agents: proposed },
          description: `Dispatch ${proposed.join(", ")} for ticket ${s.ticket?.id ?? "?"}?`,
          allow: { accept: true, edit: true, respond: false, ignore: true },
        },
        { answer: dispatchAnswer },
      );
      const agents =
        decision.type === "accept"
          ? proposed
          : decision.type === "edit"
            ? decision.args.agents
            : [];
      return { dispatch: agents };
    })
    .addConditionalEdges(
      "supervisor",
      (s) =>
        s.dispatch.length === 0
          ? ["close"]
          : s.dispatch.includes("research")
            ? ["research"]
            : afterResearch(s),
      ["research", "refund", "email", "close"],
    )
    .addConditionalEdges("research", afterResearch, ["refund", "email", "close"])
    .addNode(
      "research",
      subAgent(researchAgent(store), {
        input: brief,
        output: (v) => ({ researchReport: lastAssistantText(v.messages) }),
      }),
    )
    .addNode(
      "refund",
      subAgent(refundAgent(store, files), {
        input: brief,
        output: (v) => ({ refundReport: lastAssistantText(v.messages) }),
      }),
    )
    .addNode(
      "email",
      subAgent(emailAgent(store, files), {
        input: brief,
        output: (v) => ({ emailReport: lastAssistantText(v.messages) }),
      }),
    )
    .addNode("close", (s) => ({
      resolution:
        s.dispatch.length === 0
          ? "No sub-agent dispatched; ticket left for a person."
          : `Ticket ${s.ticket?.id ?? "?"} handled by ${s.dispatch.join(", ")}.`,
    }))
    .addEdge(START, "intake")
    .addEdge("intake", "supervisor")
    .addEdge("refund", "close")
    .addEdge("email", "close")
    .addEdge("close", END)
    .compile({ name: "support-desk", checkpointer: store });
}
