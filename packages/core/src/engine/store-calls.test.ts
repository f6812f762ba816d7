import { describe, expect, it } from "vitest";
import { pauseResumeGraph } from "../testing/runtime/graphs.ts";
import { MemorySaver } from "../checkpoint/memory.ts";
import type { Checkpointer } from "../checkpoint/types.ts";
import { Command } from "../graph/command.ts";
import { asRunId } from "../ids.ts";
import { ROOT_STREAM } from "../keys.ts";

/** A view of `inner` (another process's client of the same store) that logs each call in order. */
function logged(inner: Checkpointer): {
  store: Checkpointer;
  log: { name: string; args: unknown[] }[];
} {
  const log: { name: string; args: unknown[] }[] = [];
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== "function" || typeof name !== "string") return value;
      return (...args: unknown[]) => {
        log.push({ name, args });
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, log };
}

// What a pause and its resume cost in store calls: each record is read once, and an answer needs
// no read of its run (the store resumes it). Every call is a round trip on a networked store.
describe("store calls of a pause and its resume", () => {
  it("read the head once, never re-read a missing head, and answer without reading the run", async () => {
    const { store, log } = logged(new MemorySaver());
    const calls = (name: string): number => log.filter((entry) => entry.name === name).length;
    const graph = pauseResumeGraph(store);

    const paused = await graph.invoke({ n: 1 }, { threadId: "t1" });
    expect(paused.status).toBe("interrupted");
    expect(calls("getThreadHead")).toBe(1);
    // The new thread has no head: that read is not made a second time.
    expect(calls("getCheckpoint")).toBe(0);
    expect(calls("getRun")).toBe(0);

    log.length = 0;
    const done = await graph.resume({ threadId: "t1" }, Command.resume("yes"));
    expect(done.status).toBe("done");
    expect(done.values).toEqual({ n: 2, answer: "yes" });
    expect(calls("answerInterrupts")).toBe(1);
    expect(calls("getThreadHead")).toBe(1);
    expect(calls("getRun")).toBe(0);
    expect(calls("getCheckpoint")).toBe(0);
    expect((await store.getRun(asRunId(done.runId)))?.status).toBe("done");
  });
});

describe("a resume by the process that paused", () => {
  it("offers the store the head it paused at, and reads the continuation beside the head read, not after it", async () => {
    const { store, log } = logged(new MemorySaver());
    const graph = pauseResumeGraph(store);
    const paused = await graph.invoke({ n: 1 }, { threadId: "t1" });
    expect(paused.status).toBe("interrupted");
    const pausedAt = (await store.getThreadHead(paused.threadId, ROOT_STREAM)).checkpoint;
    log.length = 0;
    const done = await graph.resume({ threadId: "t1" }, Command.resume("yes"));
    expect(done.values).toEqual({ n: 2, answer: "yes" });
    const names = log.map((entry) => entry.name);
    const headRead = names.indexOf("getThreadHead");
    // The head this process committed is offered as known (the store hands it back undecoded)…
    expect((log[headRead]?.args[2] as { id?: string } | undefined)?.id).toBe(pausedAt?.id);
    // …and the step's reads were already out: on a networked store, one round trip fewer.
    expect(names.indexOf("getTaskResultKinds")).toBeGreaterThan(-1);
    expect(names.indexOf("getTaskResultKinds")).toBeLessThan(headRead);
    expect(names.filter((name) => name === "getTaskResultKinds")).toHaveLength(1);
  });

  it("whose head another process moved meanwhile drops the early reads and continues from the real head", async () => {
    const shared = new MemorySaver();
    const a = logged(shared);
    const b = logged(shared);
    const first = pauseResumeGraph(a.store);
    const second = pauseResumeGraph(b.store);
    expect((await first.invoke({ n: 1 }, { threadId: "t2" })).status).toBe("interrupted");
    // Another process answers, finishes that run, and starts a new one that pauses again.
    expect((await second.resume({ threadId: "t2" }, Command.resume("b1"))).status).toBe("done");
    expect((await second.invoke({ n: 10 }, { threadId: "t2" })).status).toBe("interrupted");
    a.log.length = 0;
    const done = await first.resume({ threadId: "t2" }, Command.resume("a2"));
    // Continued from the second process's pause, not from the head this process remembered.
    expect(done.status).toBe("done");
    expect(done.values).toEqual({ n: 11, answer: "a2" });
    // The reads made for the stale head were dropped, and the step was read again at the real one.
    const kinds = a.log.filter((entry) => entry.name === "getTaskResultKinds");
    expect(kinds).toHaveLength(2);
    expect(kinds[0]?.args[2]).not.toBe(kinds[1]?.args[2]);
  });
});
