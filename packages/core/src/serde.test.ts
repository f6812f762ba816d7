import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NonSerializableError, SerializationDepthError } from "./errors.ts";
import { jsonSerializer, MAX_DEPTH } from "./serde.ts";
import { nested, storedValue } from "./testing/arbitraries.ts";

const roundTrip = (value: unknown): unknown =>
  jsonSerializer.deserialize(jsonSerializer.serialize(value));

describe("jsonSerializer", () => {
  it("keeps a user object shaped like a tag as that plain object", () => {
    const untrusted = { __rein: "bigint", v: "42" };
    expect(roundTrip(untrusted)).toStrictEqual(untrusted);
    expect(roundTrip({ out: [{ __rein: "date", v: "2020-01-01T00:00:00.000Z" }] })).toStrictEqual({
      out: [{ __rein: "date", v: "2020-01-01T00:00:00.000Z" }],
    });
    // Also beside real tagged types, which take the slow path.
    const mixed = { when: new Date(0), raw: { __rein: "undef", v: 0 }, n: 1n };
    expect(roundTrip(mixed)).toStrictEqual(mixed);
  });

  it("keeps undefined items and holes in arrays, and -0", () => {
    const withUndefined = roundTrip([1, undefined, 3]) as unknown[];
    expect(withUndefined).toStrictEqual([1, undefined, 3]);
    expect(1 in withUndefined).toBe(true);
    // eslint-disable-next-line no-sparse-arrays
    const holey = roundTrip([1, , 3]) as unknown[];
    expect(holey).toHaveLength(3);
    expect(1 in holey).toBe(false);
    expect(Object.is(roundTrip(-0), -0)).toBe(true);
    expect(Object.is((roundTrip({ x: [-0] }) as { x: number[] }).x[0], -0)).toBe(true);
  });

  it("keeps a key named __proto__ as data", () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "when": null}') as object;
    const withTag = { ...value, when: new Date(5) };
    Object.defineProperty(withTag, "__proto__", {
      value: { polluted: true },
      enumerable: true,
    });
    const back = roundTrip(withTag) as Record<string, unknown>;
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(back, "__proto__")?.value).toEqual({ polluted: true });
  });

  it("refuses a 100,000-deep object with a typed depth error, not a RangeError", () => {
    const deep = nested(100_000);
    const error = (() => {
      try {
        jsonSerializer.serialize(deep);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(SerializationDepthError);
    expect(error).toBeInstanceOf(NonSerializableError);
    expect((error as SerializationDepthError).code).toBe("non_serializable");
    expect((error as SerializationDepthError).details.limit).toBe(MAX_DEPTH);
    // Deep but within the limit round-trips.
    expect(roundTrip(nested(MAX_DEPTH - 2))).toStrictEqual(nested(MAX_DEPTH - 2));
  });

  it("refuses an invalid Date with a typed error naming its path", () => {
    const error = (() => {
      try {
        jsonSerializer.serialize({ at: [new Date(Number.NaN)] });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(NonSerializableError);
    expect((error as NonSerializableError).details).toMatchObject({
      path: "at[0]",
      what: "an invalid Date",
    });
  });

  it("decodes text written before tag-shaped objects were escaped", () => {
    // Rows stored by earlier versions: tags as they were always written.
    const old =
      '{"d":{"__rein":"date","v":"2025-01-02T03:04:05.000Z"},"m":{"__rein":"map","v":[["a",{"__rein":"bigint","v":"7"}]]},"u":[1,{"__rein":"undef","v":0}],"n":{"__rein":"num","v":"NaN"}}';
    expect(jsonSerializer.deserialize(old)).toStrictEqual({
      d: new Date("2025-01-02T03:04:05.000Z"),
      m: new Map([["a", 7n]]),
      u: [1, undefined],
      n: Number.NaN,
    });
  });

  it("round-trips arbitrary values exactly (property)", () => {
    fc.assert(
      fc.property(storedValue, (value) => {
        expect(roundTrip(value)).toStrictEqual(value);
      }),
      { numRuns: 2_000 },
    );
  });

  it("keeps large strings whole", () => {
    const big = "é✓\u0000x".repeat(500_000);
    expect(roundTrip({ big, d: new Date(1) })).toStrictEqual({ big, d: new Date(1) });
  });
});
