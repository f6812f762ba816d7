import { createHash } from "node:crypto";
import { Command, END, RunConfig, START, StateGraph, lastValue } from "@rein/core";
import { SqliteSaver } from "@rein/sqlite";

const store = SqliteSaver.open(":memory:");
const graph = new StateGraph({ answer: lastValue<string>(() => "") })
  .addNode("ask", (_s, ctx) => ({ answer: ctx.interrupt<string>({ question: "Refund $40?" }) }))
  .addEdge(START, "ask")
  .addEdge("ask", END)
  .compile({ checkpointer: store, name: "refunds" });
const thread = RunConfig.thread("ticket-7");
await graph.invoke({}, thread);
await graph.resume(thread, Command.resume("yes", { actor: "alice@example.com" }));

// Re-compute every chain; with the key, also check and sign each chain's head.
const key = "a secret only the server holds";
const result = await store.verifyAudit({ key });
console.log("verified:", result.ok, "checked:", result.checked, "signed:", result.signed?.written);

// An auditor re-computes an exported line with the documented rule alone.
const [line] = (await store.listAuditChain({})).items;
const text = `rein.audit.v1\n${Buffer.byteLength(line!.threadId)}:${line!.threadId}\n${line!.n}\n${line!.prevHash ?? ""}\n${line!.content}`;
console.log("same hash:", createHash("sha256").update(text).digest("hex") === line!.hash);

// Someone edits the row by hand: the verifier names it.
store.db.exec("UPDATE audit SET record = replace(record, 'alice', 'mallory')");
const after = await store.verifyAudit({ key });
console.log(after.firstBroken?.reason, "at entry", after.firstBroken?.n);
await store.close();
