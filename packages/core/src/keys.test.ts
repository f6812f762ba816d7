import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeSlot,
  decodeStream,
  decodeTrigger,
  decodeVersion,
  encodeSlot,
  encodeStream,
  encodeTrigger,
  encodeVersion,
  type InterruptSlot,
  type StreamRef,
  type Trigger,
} from "./keys.ts";

const index = fc.nat({ max: 1_000_000 });
const checkpointId = fc.stringMatching(/^[0-9a-f]{12}-[0-9a-f]{6}-[0-9a-f]{6}$/);

describe("on-disk keys", () => {
  it("streams round-trip, and the root stream is the empty key", () => {
    const ref: fc.Arbitrary<StreamRef> = fc.oneof(
      fc.constant({ kind: "root" } as const),
      fc.string({ minLength: 1 }).map((runId) => ({ kind: "child", runId }) as const),
    );
    fc.assert(
      fc.property(ref, (r) => {
        expect(decodeStream(encodeStream(r))).toEqual(r);
      }),
    );
    expect(encodeStream({ kind: "root" })).toBe("");
  });

  it("triggers round-trip and keep their stored spelling", () => {
    const trigger: fc.Arbitrary<Trigger> = fc.oneof(
      fc.constant({ kind: "edge" } as const),
      index.map((i) => ({ kind: "send", index: i }) as const),
    );
    fc.assert(
      fc.property(trigger, (t) => {
        expect(decodeTrigger(encodeTrigger(t))).toEqual(t);
      }),
    );
    expect(encodeTrigger({ kind: "send", index: 2 })).toBe("send:2");
    expect(() => decodeTrigger("send:x")).toThrow(/not a task trigger/);
  });

  it("interrupt slots round-trip, keys with any text included", () => {
    const slot: fc.Arbitrary<InterruptSlot> = fc.oneof(
      index.map((order) => ({ kind: "order", order }) as const),
      fc.string().map((key) => ({ kind: "key", key }) as const),
      fc.constant({ kind: "before" } as const),
      fc.constant({ kind: "after" } as const),
    );
    fc.assert(
      fc.property(slot, (s) => {
        expect(decodeSlot(encodeSlot(s))).toEqual(s);
      }),
    );
    expect(encodeSlot({ kind: "order", order: 0 })).toBe("o:0");
    expect(encodeSlot({ kind: "key", key: "a:b" })).toBe("k:a:b");
    expect(() => decodeSlot("o:-1")).toThrow(/not an interrupt slot/);
  });

  it("channel versions round-trip; depth 0 is the bare checkpoint id", () => {
    fc.assert(
      fc.property(checkpointId, fc.nat({ max: 63 }), (id, depth) => {
        expect(decodeVersion(encodeVersion({ checkpointId: id, depth }))).toEqual({
          checkpointId: id,
          depth,
        });
      }),
    );
    expect(encodeVersion({ checkpointId: "c1", depth: 0 })).toBe("c1");
    expect(encodeVersion({ checkpointId: "c1", depth: 3 })).toBe("c1~3");
    // With a snapshot budget, the bytes of deltas the chain may still take ride along.
    expect(encodeVersion({ checkpointId: "c1", depth: 0, room: 4096 })).toBe("c1~0~4096");
    expect(decodeVersion("c1~3~100")).toEqual({ checkpointId: "c1", depth: 3, room: 100 });
  });
});
