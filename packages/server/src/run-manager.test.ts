import { describe, expect, it } from "vitest";
import { END, MemorySaver, RunConfig, START, StateGraph, lastValue } from "@rein/core";
import { RunManager, type RunObserver } from "./run-manager.ts";

/** An observer that writes what it sees into `log`, under `name`. */
function recorder(name: string, log: string[]): RunObserver {
  return {
    started: (kind) => log.push(`${name} started ${kind}`),
    finished: (kind, status) => log.push(`${name} finished ${kind} ${status}`),
  };
}

describe("run observers", () => {
  it("compose: a second observer is added beside the first, and one removed stops alone", async () => {
    const graph = new StateGraph({ n: lastValue<number>(() => 0) })
      .addNode("inc", (s) => ({ n: s.n + 1 }))
      .addEdge(START, "inc")
      .addEdge("inc", END)
      .compile({ checkpointer: new MemorySaver(), name: "inc" });
    const runs = new RunManager();
    const log: string[] = [];
    runs.observe(recorder("metrics", log));
    const stop = runs.observe(recorder("protocol", log));
    const run = (id: string) =>
      runs.start(graph, { kind: "input", input: { n: 1 } }, id, RunConfig.thread(id)).result;
    await run("t-1");
    expect(log).toEqual([
      "metrics started run",
      "protocol started run",
      "metrics finished run done",
      "protocol finished run done",
    ]);
    stop();
    log.length = 0;
    await run("t-2");
    expect(log).toEqual(["metrics started run", "metrics finished run done"]);
  });
});
