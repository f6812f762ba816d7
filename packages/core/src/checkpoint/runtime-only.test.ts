import { describe, expect, it } from "vitest";
import { runRuntimeStoreConformance, runtimeOnly } from "../testing/index.ts";
import { MemorySaver } from "./memory.ts";
import { RUNTIME_STORE_MEMBERS } from "./capabilities.ts";

// A store that implements the runtime store and nothing more passes the runtime suite: the
// memory store seen through the runtime members only, declaring no capability.
runRuntimeStoreConformance({
  name: "runtime-only memory",
  create: (clock) => Promise.resolve(runtimeOnly(new MemorySaver({ clock }))),
  honoursClock: true,
  destroy: (saver) => saver.close(),
});

describe("the runtime-only view", () => {
  it("has the runtime store's members and no capability member", () => {
    // The minimum a store implements: 21 members (the one interface of old had 41).
    expect(RUNTIME_STORE_MEMBERS).toHaveLength(21);
    const view = runtimeOnly(new MemorySaver()) as unknown as Record<string, unknown>;
    expect(Object.keys(view).sort()).toEqual([...RUNTIME_STORE_MEMBERS].sort());
    expect(view["capabilities"]).toEqual({});
    for (const member of [
      "listThreads",
      "deleteThread",
      "verifyAudit",
      "answerBatches",
      "webhooks",
      "appendAudit",
      "getPendingInterrupts",
      "getTaskInterrupts",
      "getTaskResultKinds",
      "acquireLeaseAndRead",
    ])
      expect(view[member], member).toBeUndefined();
  });
});
