/**
 * `npm run demo -- --interactive`: a person answers each pending interrupt at the terminal
 * (accept, edit with JSON arguments, respond, ignore), optionally with a steering note.
 */
import { createInterface } from "node:readline/promises";
import { Command, ReinError, type Checkpointer } from "@rein/core";
import { DeskFiles } from "./desk-data.ts";
import { createSupportDesk } from "./support-desk.ts";
import { interruptTable } from "./table.ts";
import { pendingOf, printOutcome, targetOf } from "./walkthrough.ts";

/** Runs the desk on a fresh thread, asking the person at the terminal for every answer. */
export async function runInteractive(options: {
  store: Checkpointer;
  dataDir: string;
  threadId: string;
}): Promise<void> {
  const { store, dataDir, threadId } = options;
  const graph = createSupportDesk({ store, dataDir });
  const rl = createInterface({ input: process.stdin, terminal: false });
  // Lines are read through the iterator, which buffers them: answers piped in ahead of the
  // questions (a script, a test) are not lost.
  const lines = rl[Symbol.asyncIterator]();
  const ask = async (question: string): Promise<string> => {
    process.stdout.write(question);
    const next = await lines.next();
    if (next.done) throw new Error("Input ended before the run finished.");
    return next.value;
  };
  try {
    const actor = (await ask("Your name (recorded as the actor): ")).trim() || "you";
    let r = await graph.invoke({}, { threadId });
    while (r.status === "interrupted") {
      const pending = await pendingOf(graph, threadId);
      console.log(`\n${interruptTable(pending)}\n`);
      const pick = Number((await ask(`Answer which row (1-${pending.length})? `)).trim());
      const item = pending[pick - 1];
      if (!item) continue;
      const kind = (await ask("accept / edit / respond / ignore? ")).trim();
      let value: unknown = { type: "accept" };
      if (kind === "edit") {
        const args = await ask(
          `New arguments as JSON (was ${JSON.stringify((item.payload as { args?: unknown }).args)}): `,
        );
        value = { type: "edit", args: JSON.parse(args) as unknown };
      } else if (kind === "respond")
        value = { type: "respond", message: await ask("Your reply in the tool's place: ") };
      else if (kind === "ignore") value = { type: "ignore" };
      const steering = (await ask("Steering note for the agent (empty for none): ")).trim();
      try {
        r = await graph.resumeTargeted(
          targetOf(item),
          Command.resume(value, { actor, ...(steering ? { steering } : {}) }),
        );
      } catch (error) {
        if (!ReinError.is(error)) throw error;
        console.log(`\n${error.name} (${error.code}): ${error.message}`);
      }
    }
    console.log(`\nrun ${r.status}.`);
    printOutcome(r.values, new DeskFiles(dataDir), threadId, (t) => console.log(t));
  } finally {
    rl.close();
  }
}
