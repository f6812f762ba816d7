// The agent's contract, run with `npm test`: it pauses before refunding, a person's answer
// decides what runs, and the refund runs exactly once.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import { Command, MemorySaver, RunConfig } from "@rein/core";
import { graphs, payments } from "./graphs.ts";

const ask = { messages: [{ role: "user" as const, content: "My order 1042 arrived broken." }] };

beforeEach(() => {
  payments.length = 0;
});

test("asks for approval before refunding, and refunds once when accepted", async () => {
  const graph = graphs.support(new MemorySaver());
  const thread = RunConfig.thread("t-accept");
  const paused = await graph.invoke(ask, thread);
  assert.equal(paused.status, "interrupted");
  assert.equal(payments.length, 0);
  const done = await graph.resume(thread, Command.resume({ type: "accept" }, { actor: "you" }));
  assert.equal(done.status, "done");
  assert.deepEqual(
    payments.map((p) => p.amount),
    [80],
  );
  assert.equal(done.values.messages.at(-1)?.content, "Done: refunded $80 on order 1042.");
});

test("an edit with a steering note runs the edited refund, and asks only once", async () => {
  const graph = graphs.support(new MemorySaver());
  const thread = RunConfig.thread("t-edit");
  await graph.invoke(ask, thread);
  const done = await graph.resume(
    thread,
    Command.resume(
      { type: "edit", args: { orderId: "1042", amount: 40 } },
      { actor: "you", steering: "Half: only one of two mugs broke." },
    ),
  );
  assert.equal(done.status, "done");
  assert.deepEqual(
    payments.map((p) => p.amount),
    [40],
  );
});

test("the refund is asked as irreversible, its amount in dollars, so the console confirms it", async () => {
  const graph = graphs.support(new MemorySaver());
  const paused = await graph.invoke(ask, RunConfig.thread("t-irreversible"));
  const payload = paused.interrupts[0]?.payload as {
    irreversible?: boolean;
    argsSchema: { properties: { amount: { unit?: string } } };
  };
  assert.equal(payload.irreversible, true);
  assert.equal(payload.argsSchema.properties.amount.unit, "USD");
});
