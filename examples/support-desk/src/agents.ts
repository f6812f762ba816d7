/**
 * The three sub-agents of the support desk, each a tool-calling `agent()` with its own
 * conversation and a scripted model behind the AI SDK adapter. The email agent's tools come from
 * an MCP server (`mail-server.ts`), started on first use.
 */
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fromAiSdk } from "@rein/ai-sdk";
import {
  agent,
  tool,
  type ApproversSpec,
  type Checkpointer,
  type CompiledGraph,
  type MessagesSchema,
  type ToolDecisionRequest,
} from "@rein/core";
import { mcpTools, type LazyMcpTools } from "@rein/mcp";
import { z } from "zod";
import { orders, policy, type DeskFiles } from "./desk-data.ts";
import { scripted } from "./scripted.ts";

/** Read-only tools: nothing a person needs to approve. */
function researchTools() {
  return [
    tool({
      name: "lookup_order",
      description: "Look up an order by id.",
      schema: z.object({ orderId: z.string() }),
      run: ({ orderId }) => orders[orderId] ?? { error: `no order ${orderId}` },
    }),
    tool({
      name: "search_policy",
      description: "Search the refund policy.",
      schema: z.object({ topic: z.string() }),
      run: () => policy,
    }),
  ];
}

/** The research agent: looks the order and the policy up, then summarizes. */
export function researchAgent(store: Checkpointer): CompiledGraph<MessagesSchema> {
  const model = scripted("research-model", (p) => {
    if (!p.results.has("lookup_order"))
      return {
        text: "Looking up the order and the refund policy.",
        toolCalls: [
          { id: "call_lookup", name: "lookup_order", args: { orderId: "1042" } },
          { id: "call_policy", name: "search_policy", args: { topic: "damaged in transit" } },
        ],
      };
    return {
      text: `Order 1042: ${p.results.get("lookup_order") ?? "?"}. Policy: ${p.results.get("search_policy") ?? "?"} One of two mugs broke: pro rata is $60, a full refund $120.`,
    };
  });
  return agent({
    name: "research_agent",
    model: fromAiSdk(model),
    tools: researchTools(),
    checkpointer: store,
  });
}

/** Arguments of `issue_refund`. */
export const refundArgs = z.object({
  orderId: z.string(),
  amount: z.number().positive().max(5000).meta({ unit: "USD" }),
  reason: z.string(),
});

/**
 * Who decides a refund: anyone who may resume up to $1,000; over that, two people from the
 * `finance` group, and never the person who started the run (four eyes).
 */
export const refundApprovers: ApproversSpec<ToolDecisionRequest> = {
  when: { path: "args.amount", gt: 1000 },
  then: { groups: ["finance"], count: 2, notRequester: true },
};

/** The order a ticket's brief names, and its total (the full refund the agent proposes). */
function orderOf(user: readonly string[]): { orderId: string; total: number } {
  const orderId = /order (\d+)/.exec(user.join("\n"))?.[1] ?? "1042";
  return { orderId, total: orders[orderId]?.total ?? 120 };
}

/** The refund agent: proposes a refund that waits for a person. */
export function refundAgent(store: Checkpointer, files: DeskFiles): CompiledGraph<MessagesSchema> {
  const model = scripted("refund-model", (p) => {
    const result = p.results.get("issue_refund");
    const { orderId, total } = orderOf(p.user);
    if (result === undefined)
      return {
        text: "The order arrived damaged; I propose a full refund.",
        toolCalls: [
          {
            id: "call_refund",
            name: "issue_refund",
            args: { orderId, amount: total, reason: "arrived damaged" },
          },
        ],
      };
    const note = p.steering.length > 0 ? ` Reviewer guidance applied: ${p.steering.join(" ")}` : "";
    return { text: `Refund result: ${result}.${note}` };
  });
  return agent({
    name: "refund_agent",
    model: fromAiSdk(model),
    tools: [
      tool({
        name: "issue_refund",
        description: "Refund money to the customer's card.",
        schema: refundArgs,
        irreversible: true,
        // Runs inside the tool node's `ctx.once`, with its idempotency key handed to the payment
        // API: a re-run of the node replays the stored receipt instead of paying again.
        run: (args, { idempotencyKey }) => {
          const paid = files.pay({ ...args, idempotencyKey });
          return { receipt: paid.receipt, amount: paid.amount };
        },
      }),
    ],
    approve: { issue_refund: { approvers: refundApprovers } },
    checkpointer: store,
  });
}

/** One mail server per data folder, shared by the desks built on it in this process. */
const mailServers = new Map<string, LazyMcpTools>();

/**
 * The mail tools of `mail-server.ts`, over stdio: a process of its own (started with tsx, as the
 * demo runs from TypeScript sources), writing to the outbox under `dataDir`. `send_*` calls wait
 * for a person.
 */
export function mailTools(dataDir: string): LazyMcpTools {
  const known = mailServers.get(dataDir);
  if (known) return known;
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  const script = fileURLToPath(new URL("./mail-server.ts", import.meta.url));
  const mail = mcpTools(
    {
      command: process.execPath,
      args: ["--import", tsx, script],
      env: { ...(process.env as Record<string, string>), DESK_DATA: dataDir },
    },
    { approve: ["send_*"] },
  );
  mailServers.set(dataDir, mail);
  return mail;
}

/** Stops the mail servers this process started (a process that ends by itself calls it last). */
export async function closeMailServers(): Promise<void> {
  const open = [...mailServers.values()];
  mailServers.clear();
  await Promise.all(open.map((m) => m.close()));
}

/** The email agent: drafts the customer's reply; sending it (an MCP tool) waits for a person. */
export function emailAgent(store: Checkpointer, files: DeskFiles): CompiledGraph<MessagesSchema> {
  const model = scripted("email-model", (p) => {
    const result = p.results.get("send_email");
    if (result === undefined)
      return {
        text: "Drafting the reply to the customer.",
        toolCalls: [
          {
            id: "call_email",
            name: "send_email",
            args: {
              to: "dana.reyes@example.com",
              subject: "Your order 1042",
              body: "Hi Dana,\n\nSorry your mug arrived broken. We are refunding you; the money shows on your card within 5 business days.\n\nThe Support Desk",
            },
          },
        ],
      };
    return { text: `Email sent (${result}).` };
  });
  return agent({
    name: "email_agent",
    model: fromAiSdk(model),
    tools: mailTools(files.dataDir).tools,
    checkpointer: store,
  });
}
