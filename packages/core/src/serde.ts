/**
 * Serialization of stored values: JSON with tagged types (Date, Map, Set, BigInt, Uint8Array,
 * non-finite numbers and `-0`, `undefined` and holes inside arrays). Pluggable: a checkpointer
 * takes any {@link Serializer}.
 *
 * A tag is an object `{ "__rein": <type>, "v": <value> }`. User data is untrusted (tool and model
 * output), so a plain object that itself has a `"__rein"` key is escaped as `{ "__rein": "obj",
 * "v": <object> }` and comes back exactly as it went in. Text written before escaping existed
 * decodes as it always did: only the new tags (`obj`, `sparse`) are new.
 */
import { NonSerializableError, SerializationDepthError } from "./errors.ts";

/** Turns values into strings for storage and back. */
export interface Serializer {
  /** Encodes a value; throws {@link NonSerializableError} naming the path of a bad value. */
  serialize(value: unknown): string;
  /** Decodes what {@link Serializer.serialize} produced. */
  deserialize(text: string): unknown;
}

/**
 * How deeply values may nest (objects, arrays, Map and Set entries). Far beyond any real state,
 * and far below the depth at which the engine's own recursion runs out of stack.
 */
export const MAX_DEPTH = 1000;

const TAG = "__rein";

type Tagged = { [TAG]: string; v: unknown };

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function child(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

function encode(value: unknown, path: string, seen: Set<object>, depth: number): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value) || Object.is(value, -0))
        return { [TAG]: "num", v: Object.is(value, -0) ? "-0" : String(value) };
      return value;
    case "bigint":
      return { [TAG]: "bigint", v: value.toString() };
    case "undefined":
      return undefined;
    case "function":
      throw new NonSerializableError(path, "a function");
    case "symbol":
      throw new NonSerializableError(path, "a symbol");
  }
  if (value === null) return null;
  if (depth >= MAX_DEPTH) throw new SerializationDepthError(path, MAX_DEPTH);
  const obj = value as object;
  if (seen.has(obj)) throw new NonSerializableError(path, "a circular reference");
  seen.add(obj);
  try {
    return encodeObject(obj, path, seen, depth + 1);
  } finally {
    seen.delete(obj);
  }
}

function encodeObject(obj: object, path: string, seen: Set<object>, depth: number): unknown {
  if (Array.isArray(obj)) return encodeArray(obj as unknown[], path, seen, depth);
  if (obj instanceof Date) {
    const time = obj.getTime();
    if (Number.isNaN(time)) throw new NonSerializableError(path, "an invalid Date");
    return { [TAG]: "date", v: obj.toISOString() };
  }
  if (obj instanceof Map) {
    return {
      [TAG]: "map",
      v: [...obj.entries()].map(([k, v], i) => [
        encode(k, `${path}<key ${i}>`, seen, depth),
        encode(v, `${path}.get(${JSON.stringify(String(k))})`, seen, depth),
      ]),
    };
  }
  if (obj instanceof Set) {
    return {
      [TAG]: "set",
      v: [...obj].map((item: unknown, i) => encode(item, `${path}<item ${i}>`, seen, depth)),
    };
  }
  if (obj instanceof Uint8Array) return { [TAG]: "bytes", v: Buffer.from(obj).toString("base64") };
  if (!isPlainObject(obj)) {
    const name = (obj as { constructor?: { name?: string } }).constructor?.name ?? "unknown";
    throw new NonSerializableError(path, `an instance of ${name}`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(obj)) {
    const encoded = encode(item, child(path, key), seen, depth);
    if (encoded !== undefined) setOwn(out, key, encoded);
  }
  // A user object that looks like a tag is wrapped, so decoding never mistakes it for one.
  return Object.hasOwn(obj, TAG) ? { [TAG]: "obj", v: out } : out;
}

function encodeArray(arr: unknown[], path: string, seen: Set<object>, depth: number): unknown {
  const item = (value: unknown, i: number): unknown => {
    const encoded = encode(value, `${path}[${i}]`, seen, depth);
    return encoded === undefined ? { [TAG]: "undef", v: 0 } : encoded;
  };
  let dense = true;
  for (let i = 0; i < arr.length && dense; i++) dense = i in arr;
  if (dense) return arr.map(item);
  // Holes stay holes: the length and the present entries, so a sparse array costs its entries.
  const entries: [number, unknown][] = [];
  // Object.keys lists only the present indices (and any extra properties, which JSON drops).
  for (const key of Object.keys(arr))
    if (isIndex(key)) entries.push([Number(key), item(arr[Number(key)], Number(key))]);
  return { [TAG]: "sparse", v: [arr.length, entries] };
}

/** Sets an own property, also one named `__proto__` (an assignment would set the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  else target[key] = value;
}

function isIndex(key: string): boolean {
  return /^(?:0|[1-9]\d*)$/.test(key);
}

/** Rebuilds tagged values in place (the parsed text is ours to reuse). */
function decode(value: unknown, depth: number): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH + 2) throw new SerializationDepthError("", MAX_DEPTH);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = decode(value[i], depth + 1);
    return value;
  }
  const record = value as Record<string, unknown>;
  if (TAG in record) return decodeTagged(record as Tagged, depth);
  return decodeFields(record, depth);
}

function decodeFields(record: Record<string, unknown>, depth: number): Record<string, unknown> {
  for (const key of Object.keys(record)) {
    const item = record[key];
    if (typeof item === "object" && item !== null) setOwn(record, key, decode(item, depth + 1));
  }
  return record;
}

function decodeTagged(tagged: Tagged, depth: number): unknown {
  switch (tagged[TAG]) {
    case "date":
      return new Date(tagged.v as string);
    case "map":
      return new Map(decode(tagged.v, depth + 1) as [unknown, unknown][]);
    case "set":
      return new Set(decode(tagged.v, depth + 1) as unknown[]);
    case "bigint":
      return BigInt(tagged.v as string);
    case "bytes":
      return new Uint8Array(Buffer.from(tagged.v as string, "base64"));
    case "num":
      return Number(tagged.v);
    case "undef":
      return undefined;
    case "obj":
      // The escaped object: its own keys are data, only its values may hold tags.
      return decodeFields(tagged.v as Record<string, unknown>, depth);
    case "sparse": {
      const [length, entries] = tagged.v as [number, [number, unknown][]];
      const out: unknown[] = new Array<unknown>(length);
      for (const [index, item] of entries) out[index] = decode(item, depth + 1);
      return out;
    }
    default:
      // Not a tag this version writes: data from elsewhere, kept as it is.
      return decodeFields(tagged, depth);
  }
}

/**
 * True when `value` is plain JSON that `JSON.stringify` encodes exactly (no Date, Map, Set,
 * BigInt, bytes, non-finite number or `-0`, undefined array item or hole, object with the tag key,
 * nor anything unstorable). The walk allocates nothing, so checking first and then using the
 * native encoder is the fast path.
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value) && !(value === 0 && 1 / value < 0);
    case "object": {
      if (value === null) return true;
      if (depth > 64) return false;
      if (Array.isArray(value)) {
        for (const item of value)
          if (item === undefined || !isPlainJson(item, depth + 1)) return false;
        return true;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) {
        if (key === TAG) return false;
        const item = (value as Record<string, unknown>)[key];
        if (item !== undefined && !isPlainJson(item, depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** The default serializer: JSON with tagged types. */
export const jsonSerializer: Serializer = {
  serialize(value) {
    if (isPlainJson(value, 0)) return JSON.stringify(value) ?? "null";
    // Tagged types, or a bad value whose path `encode` reports.
    return JSON.stringify(encode(value, "", new Set(), 0)) ?? "null";
  },
  deserialize(text) {
    // Only text that holds a tag needs the walk.
    const parsed = JSON.parse(text) as unknown;
    return text.includes(TAG) ? decode(parsed, 0) : parsed;
  },
};

/**
 * Checks that `serializer` can store `value` (the default serializer checks without encoding when
 * the value is plain JSON), throwing {@link NonSerializableError} naming `root` in the path.
 */
export function assertStorable(serializer: Serializer, value: unknown, root: string): void {
  if (serializer === jsonSerializer) return assertSerializable(value, root);
  try {
    serializer.serialize(value);
  } catch (error) {
    if (error instanceof NonSerializableError) throw error;
    throw new NonSerializableError(root, error instanceof Error ? error.message : String(error));
  }
}

/**
 * Checks that `value` can be stored, throwing {@link NonSerializableError} with the path of the
 * first bad value. `root` names the value in the path (`payload.items[2].fn`).
 */
export function assertSerializable(value: unknown, root: string): void {
  if (isPlainJson(value, 0)) return;
  encode(value, root, new Set(), 0);
}
