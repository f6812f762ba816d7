/**
 * Type tests of a graph's channels: what a node returns, a `Command`'s update, `invoke`'s input
 * and `updateState`'s values are checked against the schema at compile time. Each
 * `@ts-expect-error` fails `tsc -b` (and so `npm test`) the day that line compiles: the day a
 * wrong update type or an unknown channel would reach the store unnoticed.
 */
import { expectTypeOf } from "vitest";
import { append, Command, lastValue, MemorySaver, StateGraph, type UpdateOf } from "./index.ts";

const schema = { count: lastValue<number>(), log: append<string>() };
type Update = UpdateOf<typeof schema>;

expectTypeOf<Update>().toEqualTypeOf<{ count?: number; log?: string | string[] }>();

// A node returning a wrong update type for a channel.
// @ts-expect-error count takes a number
new StateGraph(schema).addNode("wrong-type", () => ({ count: "three" }));

// A node updating an unknown channel. (Beside a known one, `{ count: 1, counter: 3 }`, it
// compiles today: a returned literal gets no excess-property check through the node's union
// type. The runtime refuses it.)
// @ts-expect-error no channel is named counter
new StateGraph(schema).addNode("unknown-channel", () => ({ counter: 3 }));

// An async node returning a wrong update type.
// @ts-expect-error log takes a string or strings, not a number
new StateGraph(schema).addNode("async-wrong-type", async () => Promise.resolve({ log: 1 }));

// A Command carrying a wrong update type, and one naming an unknown channel.
new StateGraph(schema).addNode(
  "command-wrong-type",
  // @ts-expect-error count takes a number
  () => new Command({ update: { count: "three" }, goto: "next" }),
);
new StateGraph(schema).addNode(
  "command-unknown-channel",
  // @ts-expect-error no channel is named counter
  () => new Command({ update: { counter: 3 }, goto: "next" }),
);

// The right types compile: a plain update, a Command, nothing.
new StateGraph(schema)
  .addNode("right", () => ({ count: 3, log: ["a", "b"] }))
  .addNode("command", () => new Command({ update: { log: "c" }, goto: "right" }))
  .addNode("nothing", () => undefined);

const graph = new StateGraph(schema)
  .addNode("only", () => ({ count: 1 }))
  .addEdge("__start__", "only")
  .compile({ checkpointer: new MemorySaver() });

export async function callerInputs(): Promise<void> {
  // @ts-expect-error count takes a number
  await graph.invoke({ count: "one" }, { threadId: "t" });
  // @ts-expect-error no channel is named counter
  await graph.invoke({ counter: 1 }, { threadId: "t" });
  // @ts-expect-error no channel is named counter, also beside one that is
  await graph.invoke({ count: 1, counter: 1 }, { threadId: "t" });
  // @ts-expect-error log takes a string or strings
  await graph.updateState({ threadId: "t" }, { log: 2 });
  // @ts-expect-error no channel is named logs
  await graph.updateState({ threadId: "t" }, { logs: "x" });
  const result = await graph.invoke({ count: 1 }, { threadId: "t" });
  expectTypeOf(result.values.count).toEqualTypeOf<number>();
  expectTypeOf(result.values.log).toEqualTypeOf<string[]>();
}
