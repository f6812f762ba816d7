import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeAttemptMarker,
  decodeEphemeralThreadId,
  decodeHttpRequestId,
  decodeIdempotencyKey,
  decodeSlot,
  decodeStream,
  decodeTrigger,
  decodeVersion,
  encodeAttemptMarker,
  encodeEphemeralThreadId,
  encodeHttpRequestId,
  encodeIdempotencyKey,
  encodeSlot,
  encodeStream,
  encodeTrigger,
  encodeVersion,
  type HttpRequestRef,
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

  it("HTTP request ids round-trip, whatever the tenant, thread id and key", () => {
    const ref: fc.Arbitrary<HttpRequestRef> = fc.record({
      tenant: fc.option(fc.string(), { nil: null }),
      threadId: fc.string({ minLength: 1 }),
      key: fc.string(),
    });
    fc.assert(
      fc.property(ref, (r) => {
        expect(decodeHttpRequestId(encodeHttpRequestId(r))).toEqual(r);
      }),
    );
    // Today's bytes for ids that read back unambiguously: stored ids written before still match.
    expect(encodeHttpRequestId({ tenant: "acme", threadId: "t1", key: "k:1" })).toBe(
      "http:acme:t1:k:1",
    );
    expect(encodeHttpRequestId({ tenant: null, threadId: "t1", key: "k" })).toBe("http:-:t1:k");
    expect(() => decodeHttpRequestId("http:acme:t1")).toThrow(/not an HTTP request id/);
  });

  it("a null tenant and a tenant named '', '-' or holding ':' never share a request id", () => {
    const ids = [null, "", "-", ":", "-:t1", "%2D", "a:b"].map((tenant) =>
      encodeHttpRequestId({ tenant, threadId: "t1", key: "k" }),
    );
    expect(new Set(ids).size).toBe(ids.length);
    // Nor do two tenants whose ':' would let one's thread id pass for the other's.
    expect(encodeHttpRequestId({ tenant: "a:b", threadId: "c", key: "k" })).not.toBe(
      encodeHttpRequestId({ tenant: "a", threadId: "b:c", key: "k" }),
    );
  });

  it("idempotency keys round-trip and keep the bytes external APIs have seen", () => {
    const ref = fc.record({
      threadId: fc.string({ minLength: 1 }),
      taskId: fc.stringMatching(/^t_[0-9a-zA-Z_-]{1,40}$/),
      key: fc.string().filter((k) => !/:t_/.test(k)),
    });
    fc.assert(
      fc.property(ref, (r) => {
        expect(decodeIdempotencyKey(encodeIdempotencyKey(r))).toEqual(r);
      }),
    );
    expect(encodeIdempotencyKey({ threadId: "t:1", taskId: "t_ab", key: "charge" })).toBe(
      "rein:t:1:t_ab:charge",
    );
    expect(() => decodeIdempotencyKey("rein:t1:charge")).toThrow(/not an idempotency key/);
  });

  it("ctx.once attempt markers round-trip and are never a user key", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.string(), (attempt, key) => {
        expect(decodeAttemptMarker(encodeAttemptMarker({ attempt, key }))).toEqual({
          attempt,
          key,
        });
      }),
    );
    expect(encodeAttemptMarker({ attempt: 2, key: "k" })).toBe("\u0001attempt:2:k");
    expect(() => decodeAttemptMarker("attempt:2:k")).toThrow(/not an attempt marker/);
  });

  it("ephemeral thread ids round-trip", () => {
    fc.assert(
      fc.property(fc.uuid(), (uuid) => {
        expect(decodeEphemeralThreadId(encodeEphemeralThreadId(uuid))).toBe(uuid);
      }),
    );
    expect(encodeEphemeralThreadId("u1")).toBe("ephemeral-u1");
    expect(() => decodeEphemeralThreadId("t1")).toThrow(/not an ephemeral thread id/);
  });
});
