import { START, StateGraph, lastValue } from "@rein/core";
import type { GraphFactory } from "@rein/server";

// A one-node desk: it asks a person before it closes the ticket.
function buildDesk() {
  return new StateGraph({ status: lastValue<string>() })
    .addNode("close", (_s, ctx) => {
      const answer = ctx.interrupt<{ type: string }>({ action: "close", args: {} });
      return { status: `closed (${answer.type})` };
    })
    .addEdge(START, "close");
}

export const graphs: Record<string, GraphFactory> = {
  desk: (store) => buildDesk().compile({ checkpointer: store, name: "desk" }),
};
