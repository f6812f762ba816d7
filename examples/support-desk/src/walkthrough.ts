/**
 * The scripted walk-through of the support desk: dispatch, two sub-agents paused at once, a
 * refused edit, a targeted answer with an edit and a steering note while the email stays
 * paused, a stale answer refused with the latest metadata, then the email accepted.
 */
import {
  Command,
  InvalidAnswerError,
  StaleTargetError,
  textOf,
  type Checkpointer,
  type Message,
  type InterruptListItem,
  type ResumeTarget,
} from "@rein/core";
import { DeskFiles } from "./desk-data.ts";
import { createSupportDesk } from "./support-desk.ts";
import { interruptTable } from "./table.ts";

/** Where the walk-through prints, and how a person answers (interactive mode). */
export interface WalkthroughOptions {
  store: Checkpointer;
  dataDir: string;
  threadId: string;
  print: (text: string) => void;
}

/** What the walk-through ends with. */
export interface WalkthroughResult {
  status: string;
  values: Record<string, unknown>;
}

/** The target of one pending interrupt: its run, namespace, id and checkpoint. */
export function targetOf(item: InterruptListItem): ResumeTarget {
  return {
    runId: item.runId,
    namespace: item.namespace,
    interruptId: item.id,
    expectedCheckpointId: item.checkpointId,
  };
}

/** Pending interrupts of a thread, oldest first (the queue lists newest first). */
export async function pendingOf(
  graph: ReturnType<typeof createSupportDesk>,
  threadId: string,
): Promise<InterruptListItem[]> {
  const page = await graph.listInterrupts({ status: "pending", threadId, limit: 50 });
  return [...page.items].reverse();
}

function bySubAgent(items: readonly InterruptListItem[], graphName: string): InterruptListItem {
  const found = items.find((i) => i.graph === graphName);
  if (!found) throw new Error(`no pending interrupt in ${graphName}`);
  return found;
}

/** Runs the scripted walk-through on a fresh thread. */
export async function runWalkthrough(options: WalkthroughOptions): Promise<WalkthroughResult> {
  const { store, dataDir, threadId, print } = options;
  const graph = createSupportDesk({ store, dataDir });
  const files = new DeskFiles(dataDir);
  const step = (title: string) => print(`\n== ${title}`);

  step(`1. A ticket arrives: start run on thread ${threadId} with input {}`);
  let r = await graph.invoke({}, { threadId });
  print(`run ${r.status}. Pending:`);
  print(interruptTable(await pendingOf(graph, threadId)));

  step("2. lead@example.com approves dispatching all three sub-agents");
  r = await graph.resume(
    { threadId },
    Command.resume({ type: "accept" }, { actor: "lead@example.com" }),
  );
  const paused = await pendingOf(graph, threadId);
  print(`run ${r.status}. research finished; refund and email paused at the same time:`);
  print(interruptTable(paused));
  const refund = bySubAgent(paused, "refund_agent");
  const email = bySubAgent(paused, "email_agent");

  step("3. alice@example.com edits the refund with a typo: refused, still pending");
  try {
    await graph.resumeTargeted(
      targetOf(refund),
      Command.resume(
        {
          type: "edit",
          args: { orderId: "1042", amount: "sixty", reason: "one of two mugs broke" },
        },
        { actor: "alice@example.com" },
      ),
    );
  } catch (error) {
    if (!(error instanceof InvalidAnswerError)) throw error;
    print(`${error.name} (${error.code}): ${error.message}`);
  }
  print(`refund interrupt still ${(await store.getInterrupt(refund.id))?.status}`);

  step(
    "4. alice answers the refund by targeted resume: amount edited to $60, with a steering note",
  );
  r = await graph.resumeTargeted(
    targetOf(refund),
    Command.resume(
      { type: "edit", args: { orderId: "1042", amount: 60, reason: "one of two mugs broke" } },
      { actor: "alice@example.com", steering: "Pro rata: only one of the two mugs broke." },
    ),
  );
  print(`run ${r.status}. The email is still paused, same ids:`);
  print(interruptTable(await pendingOf(graph, threadId)));
  print(`ledger: ${JSON.stringify(files.ledger(threadId))}`);

  step("5. bob@example.com sends the same refund answer late: refused as stale");
  try {
    await graph.resumeTargeted(
      targetOf(refund),
      Command.resume({ type: "accept" }, { actor: "bob@example.com" }),
    );
  } catch (error) {
    if (!(error instanceof StaleTargetError)) throw error;
    const d = error.details as {
      runStatus: string | null;
      headCheckpointId: string | null;
      pendingInterrupts: { id: string; node: string; namespace: string[] }[];
    };
    print(`${error.name} (${error.code}): ${error.message}`);
    print(`  latest: run status ${d.runStatus}, head checkpoint ${d.headCheckpointId}`);
    for (const p of d.pendingInterrupts)
      print(`  still pending: ${p.id} at ${[...p.namespace, p.node].join("/")}`);
  }

  step("6. carol@example.com accepts the email");
  r = await graph.resumeTargeted(
    targetOf(email),
    Command.resume({ type: "accept" }, { actor: "carol@example.com" }),
  );
  print(`run ${r.status}.`);
  await printRefundConversation(graph, threadId, print);
  printOutcome(r.values, files, threadId, print);
  return { status: r.status, values: r.values };
}

/** Prints the refund sub-agent's own conversation: what the model asked, what ran, who decided. */
async function printRefundConversation(
  graph: ReturnType<typeof createSupportDesk>,
  threadId: string,
  print: (text: string) => void,
): Promise<void> {
  const state = await graph.getState({ threadId }, { subgraphs: true });
  const refund = state.subgraphs?.find((c) => c.graph === "refund_agent");
  print(`\n== The refund sub-agent's conversation (${refund?.subAgentId ?? "?"})`);
  for (const m of (refund?.values.messages ?? []) as Message[]) print(`  ${describeMessage(m)}`);
}

function describeMessage(m: Message): string {
  const text = textOf(m);
  if (m.role === "assistant")
    return `assistant: ${text}${(m.toolCalls ?? []).map((c) => ` [calls ${c.name} ${JSON.stringify(c.args)}]`).join("")}`;
  if (m.role === "tool") {
    const r = m.review;
    const review = r
      ? ` (${r.decision} by ${r.actor ?? "?"}${r.originalArgs ? `, model asked ${JSON.stringify(r.originalArgs)}` : ""})`
      : "";
    return `tool ${m.name} ran with ${JSON.stringify(m.args)}${review}: ${text}`;
  }
  return `${m.role}${m.steering ? " (steering)" : ""}: ${text}`;
}

/** Prints the final state, the ledger and the outbox. */
export function printOutcome(
  values: Record<string, unknown>,
  files: DeskFiles,
  threadId: string,
  print: (text: string) => void,
): void {
  print("\n== Final state");
  for (const [key, value] of Object.entries(values))
    print(`${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
  // The files outlive one run: show this thread's lines (earlier demo runs are other threads).
  const ledger = files.ledger(threadId);
  print(`\n== Ledger: ${ledger.length} refund(s) for this thread (${files.ledgerPath})`);
  for (const entry of ledger) print(JSON.stringify(entry));
  const outbox = files.outbox(threadId);
  print(`\n== Outbox: ${outbox.length} email(s) for this thread (${files.outboxDir})`);
  for (const mail of outbox) print(`--- ${mail.file}\n${mail.content.trimEnd()}`);
}
