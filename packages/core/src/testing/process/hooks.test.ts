import { describe, expect, it } from "vitest";
import { MemorySaver } from "../../checkpoint/memory.ts";
import type { ThreadId } from "../../ids.ts";
import { hookSaver, jitterSaver } from "./hooks.ts";

const thread = (id: string) => ({
  threadId: id as ThreadId,
  tenant: null,
  metadata: {},
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
});

describe("hookSaver", () => {
  it("calls before and after hooks around the real call and keeps its result", async () => {
    const saver = new MemorySaver();
    const calls: string[] = [];
    const hooked = hookSaver(saver, {
      before: {
        putThread: ([t]) => void calls.push(`before ${(t as { threadId: string }).threadId}`),
      },
      after: {
        getThread: (result) => void calls.push(`after ${JSON.stringify(result !== undefined)}`),
      },
    });
    await hooked.putThread(thread("t1"));
    const read = await hooked.getThread("t1" as ThreadId);
    expect(read?.threadId).toBe("t1");
    expect(calls).toEqual(["before t1", "after true"]);
    // Unhooked methods reach the real store.
    expect((await saver.getThread("t1" as ThreadId))?.threadId).toBe("t1");
  });

  it("lets a hook stop the call from returning (a worker that kills itself there)", async () => {
    const hooked = hookSaver(new MemorySaver(), {
      after: {
        putThread: () => {
          throw new Error("killed here");
        },
      },
    });
    await expect(hooked.putThread(thread("t2"))).rejects.toThrow("killed here");
  });
});

describe("jitterSaver", () => {
  it("delays calls without changing what they do", async () => {
    const saver = jitterSaver(new MemorySaver(), 5);
    await saver.putThread(thread("t3"));
    expect((await saver.getThread("t3" as ThreadId))?.threadId).toBe("t3");
  });
});
