import { describe, expect, it } from "vitest";
import type { CheckpointRecord } from "../checkpoint/types.ts";
import type { CheckpointId, RunId, TaskId, ThreadId } from "../ids.ts";
import { HeadCache, taskArgument } from "./head-cache.ts";

const head = (thread: string, arg: unknown = { n: 1 }): CheckpointRecord => ({
  threadId: thread as ThreadId,
  stream: "",
  id: `cp-${thread}` as CheckpointId,
  parentId: null,
  runId: "run" as RunId,
  step: 0,
  versions: { v: "1" },
  next: [{ id: "task" as TaskId, node: "work", trigger: "send:0", arg }],
  source: "loop",
  createdAt: "2026-01-01T00:00:00.000Z",
  metadata: {},
});

describe("HeadCache", () => {
  it("keeps the most recently used heads up to its capacity", () => {
    const cache = new HeadCache(2);
    cache.remember(head("a"));
    cache.remember(head("b"));
    expect(cache.get("a" as ThreadId)?.threadId).toBe("a");
    cache.remember(head("c"));
    // b was the least recently used once a was read.
    expect(cache.get("b" as ThreadId)).toBeUndefined();
    expect(cache.get("a" as ThreadId)?.threadId).toBe("a");
    expect(cache.get("c" as ThreadId)?.threadId).toBe("c");
  });

  it("freezes what it shares, and hands node code a copy of a Send argument", () => {
    const kept = head("a", { items: [1] });
    const own = head("b", { items: [1] });
    new HeadCache().remember(kept);
    expect(Object.isFrozen(kept) && Object.isFrozen(kept.next[0])).toBe(true);
    expect(() => {
      (kept as { step: number }).step = 5;
    }).toThrow(TypeError);
    const task = kept.next[0] as CheckpointRecord["next"][number];
    const copy = taskArgument(kept, task) as { items: number[] };
    expect(copy).toEqual({ items: [1] });
    copy.items.push(2);
    expect(task.arg).toEqual({ items: [1] });
    // A head no cache shares is the run's own: its argument is passed as is.
    const ownTask = own.next[0] as CheckpointRecord["next"][number];
    expect(taskArgument(own, ownTask)).toBe(ownTask.arg);
  });
});
