/**
 * fast-check arbitraries of values a store must keep exactly: JSON-ish data with the serializer's
 * tag key and tag-shaped objects, `-0` and non-finite numbers, `undefined` and holes in arrays,
 * tagged types (Date, Map, Set, BigInt, bytes), deep nesting and long strings.
 */
import fc from "fast-check";

/** Object keys, biased towards the ones an encoder can get wrong. */
const key = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom("__rein", "v", "__proto__", "", "0", "toString") },
);

/** Strings with the tag key inside, unicode and, now and then, a long one. */
const text = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: "binary", maxLength: 24 }) },
  { weight: 1, arbitrary: fc.constantFrom("__rein", '{"__rein":"bigint","v":"42"}', "\u0000") },
  { weight: 1, arbitrary: fc.string({ minLength: 2_000, maxLength: 20_000 }) },
);

const number = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, Number.NaN, Infinity, -Infinity, Number.MAX_SAFE_INTEGER),
);

/** Objects shaped like the serializer's tags (what untrusted tool or model output may hold). */
const tagLookalike = fc.record(
  {
    __rein: fc.constantFrom(
      "bigint",
      "date",
      "map",
      "set",
      "bytes",
      "num",
      "undef",
      "obj",
      "sparse",
    ),
    v: fc.oneof(fc.constant("42"), fc.constant(0), fc.constant([]), fc.string()),
  },
  { noNullPrototype: true },
);

/** Any value a store must return exactly as given. */
export const storedValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    text,
    number,
    fc.boolean(),
    fc.constant(null),
    fc.bigInt(),
    fc.date({ noInvalidDate: true }),
    fc.uint8Array({ maxLength: 16 }),
    tagLookalike,
    fc.array(fc.oneof(tie("value"), fc.constant(undefined)), { maxLength: 5 }),
    fc.sparseArray(tie("value"), { maxLength: 6 }),
    fc.dictionary(key, tie("value"), { maxKeys: 5, noNullPrototype: true }),
    fc
      .dictionary(key, tie("value"), { maxKeys: 3, noNullPrototype: true })
      .map((o) => ({ ...o, __rein: "bigint" })),
    fc
      .array(fc.tuple(fc.oneof(fc.string(), fc.integer()), tie("value")), { maxLength: 3 })
      .map((entries) => new Map(entries)),
    fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 4 }).map((items) => new Set(items)),
  ),
})).value;

/** An object nested `depth` levels deep: `{ n: { n: ... { leaf: true } } }`. */
export function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < depth; i++) value = { n: value };
  return value;
}
