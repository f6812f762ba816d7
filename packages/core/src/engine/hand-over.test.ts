import { describe, expect, it } from "vitest";
import { append } from "../channels.ts";
import { MemorySaver } from "../checkpoint/memory.ts";
import { RunHandedOverError } from "../errors.ts";
import type { ThreadId } from "../ids.ts";
import { END, START, StateGraph } from "../api/state-graph.ts";

describe("a run handed over by a process shutting down", () => {
  it("records nothing, stays running with its lease released, and a continuation re-runs the cut step once", async () => {
    const saver = new MemorySaver();
    const controller = new AbortController();
    const executed: string[] = [];
    const charged: string[] = [];
    const graph = new StateGraph({ log: append<string>() })
      .addNode("prep", () => {
        executed.push("prep");
        return { log: "prep" };
      })
      .addNode("charge", async (_s, ctx) => {
        executed.push("charge");
        if (executed.filter((e) => e === "charge").length === 1) {
          // The first execution is cut mid-step, before its side effect.
          controller.abort(new RunHandedOverError("t-hand", "ignored"));
          return {};
        }
        await ctx.once("charge", () => charged.push("charge"));
        return { log: "charge" };
      })
      .addEdge(START, "prep")
      .addEdge("prep", "charge")
      .addEdge("charge", END)
      .compile({ checkpointer: saver });
    const thread = "t-hand" as ThreadId;
    await expect(
      graph.invoke({}, { threadId: thread, signal: controller.signal }),
    ).rejects.toBeInstanceOf(RunHandedOverError);
    const [run] = await saver.listRuns(thread);
    expect(run?.status).toBe("running");
    expect(await saver.getLease(thread)).toBeUndefined();
    // Another owner continues it from its last checkpoint: `prep` is not executed again.
    const result = await graph.invoke(null, { threadId: thread });
    expect(result).toMatchObject({ status: "done", runId: run?.runId });
    expect(result.values.log).toEqual(["prep", "charge"]);
    expect(executed).toEqual(["prep", "charge", "charge"]);
    expect(charged).toEqual(["charge"]);
  });
});
