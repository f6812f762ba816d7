/**
 * The v2 mapping without a server: core stream events to channel events (sub-agents announced
 * once, interrupts once per run, streamed text as one message), agent statuses, and the event
 * log's replay and filters as the client narrows them.
 */
import type { StreamEvent } from "@rein/core";
import { describe, expect, it } from "vitest";
import { ThreadEventLog, matchesFilter } from "./event-log.ts";
import { agentStatusOf, RunTranslator, sameNamespace } from "./mapping.ts";

type Ids = { taskId: never; runId: never; checkpointId: never };
const ids = { taskId: "t1", runId: "r1" } as unknown as Pick<Ids, "taskId" | "runId">;

describe("RunTranslator", () => {
  it("announces a sub-agent's namespace once, with every level of a nested one", () => {
    const t = new RunTranslator((ns) => ns.at(-1) ?? "root");
    const values = (namespace: string[]): StreamEvent => ({
      type: "values",
      namespace,
      values: { n: 1 },
    });
    const first = t.translate(values(["a", "b"]));
    expect(first.map((e) => [e.method, e.namespace])).toEqual([
      ["lifecycle", ["a"]],
      ["lifecycle", ["a", "b"]],
      ["values", ["a", "b"]],
    ]);
    expect(t.translate(values(["a", "b"])).map((e) => e.method)).toEqual(["values"]);
    expect(t.sawValues).toBe(true);
  });

  it("announces an interrupt once per run, at its own namespace", () => {
    const t = new RunTranslator(() => "g");
    const interrupt = {
      type: "interrupt",
      namespace: ["refund"],
      interrupt: { id: "i_1", namespace: ["refund"], payload: { q: 1 } },
    } as unknown as StreamEvent;
    const out = t.translate(interrupt).filter((e) => e.method === "input.requested");
    expect(out).toEqual([
      {
        method: "input.requested",
        namespace: ["refund"],
        data: { interrupt_id: "i_1", payload: { q: 1 } },
      },
    ]);
    expect(t.translate(interrupt).filter((e) => e.method === "input.requested")).toEqual([]);
  });

  it("turns a model's text deltas into one message, finished when its task ends", () => {
    const t = new RunTranslator(() => "g");
    const delta = (text: string) =>
      ({
        type: "messages",
        namespace: [],
        node: "model",
        ...ids,
        delta: { type: "text", text },
      }) as unknown as StreamEvent;
    const data = [
      ...t.translate(delta("Refunds ")),
      ...t.translate(delta("take 3 days.")),
      ...t.translate({
        type: "tasks",
        namespace: [],
        node: "model",
        taskId: ids.taskId,
        phase: "end",
      }),
    ]
      .filter((e) => e.method === "messages")
      .map(
        (e) => e.data as { event: string; delta?: { text: string }; content?: { text: string } },
      );
    expect(data.map((d) => d.event)).toEqual([
      "message-start",
      "content-block-start",
      "content-block-delta",
      "content-block-delta",
      "content-block-finish",
      "message-finish",
    ]);
    expect(data[4]?.content?.text).toBe("Refunds take 3 days.");
    expect(t.finishAll()).toEqual([]);
  });
});

describe("statuses and namespaces", () => {
  it("maps Rein's run statuses, a run with its own pending question read as interrupted", () => {
    expect(agentStatusOf("running", true)).toBe("interrupted");
    expect(agentStatusOf("queued", false)).toBe("started");
    expect(agentStatusOf("done", false)).toBe("completed");
    expect(agentStatusOf("cancelled", false)).toBe("failed");
    expect(agentStatusOf("error", false)).toBe("failed");
  });

  it("matches namespaces ignoring a dynamic suffix", () => {
    expect(sameNamespace(["refund:3f2a"], ["refund"])).toBe(true);
    expect(sameNamespace(["refund"], ["research"])).toBe(false);
    expect(sameNamespace([], [])).toBe(true);
  });
});

describe("ThreadEventLog", () => {
  it("replays the latest run's events after `since`, then delivers live ones, seq never 0", () => {
    const log = new ThreadEventLog("e");
    expect(log.lastSeq).toBeGreaterThan(0);
    log.emit("values", [], { a: 1 });
    log.beginRun();
    const kept = log.emit("values", [], { a: 2 });
    log.emit("values", [], { a: 3 });
    const seen: number[] = [];
    const stop = log.subscribe(kept.seq, (e) => seen.push(e.seq));
    log.emit("values", [], { a: 4 });
    stop();
    log.emit("values", [], { a: 5 });
    expect(seen).toEqual([kept.seq + 1, kept.seq + 2]);
    expect(kept.event_id).toBe(`e-${kept.seq}`);
  });

  it("filters by channel (named custom under custom), namespace prefix and depth", () => {
    const log = new ThreadEventLog("e");
    const deep = log.emit("input.requested", ["a:1", "b"], { interrupt_id: "i" });
    const named = log.emit("custom", [], { name: "progress", payload: 1 });
    expect(matchesFilter(deep, { channels: ["input"] })).toBe(true);
    expect(matchesFilter(deep, { channels: ["values"] })).toBe(false);
    expect(matchesFilter(deep, { channels: ["input"], namespaces: [["a"]] })).toBe(true);
    expect(matchesFilter(deep, { channels: ["input"], namespaces: [["a"]], depth: 0 })).toBe(false);
    expect(matchesFilter(deep, { channels: ["input"], namespaces: [["c"]] })).toBe(false);
    expect(matchesFilter(named, { channels: ["custom"] })).toBe(true);
    expect(matchesFilter(named, { channels: ["custom:progress"] })).toBe(true);
    expect(matchesFilter(named, { channels: ["custom:other"] })).toBe(false);
  });
});
