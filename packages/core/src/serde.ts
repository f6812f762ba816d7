/**
 * Serialization of stored values: JSON with tagged types (Date, Map, Set, BigInt, Uint8Array,
 * undefined inside arrays). Pluggable: a checkpointer takes any {@link Serializer}.
 */
import { NonSerializableError } from "./errors.ts";

/** Turns values into strings for storage and back. */
export interface Serializer {
  /** Encodes a value; throws {@link NonSerializableError} naming the path of a bad value. */
  serialize(value: unknown): string;
  /** Decodes what {@link Serializer.serialize} produced. */
  deserialize(text: string): unknown;
}

const TAG = "__rein";

type Tagged = { [TAG]: string; v: unknown };

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function encode(value: unknown, path: string, seen: Set<object>): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) return { [TAG]: "num", v: String(value) };
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
  const obj = value as object;
  if (seen.has(obj)) throw new NonSerializableError(path, "a circular reference");
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      return obj.map((item: unknown, i) => {
        const encoded = encode(item, `${path}[${i}]`, seen);
        return encoded === undefined ? { [TAG]: "undef", v: 0 } : encoded;
      });
    }
    if (obj instanceof Date) return { [TAG]: "date", v: obj.toISOString() };
    if (obj instanceof Map) {
      return {
        [TAG]: "map",
        v: [...obj.entries()].map(([k, v], i) => [
          encode(k, `${path}<key ${i}>`, seen),
          encode(v, `${path}.get(${JSON.stringify(String(k))})`, seen),
        ]),
      };
    }
    if (obj instanceof Set) {
      return {
        [TAG]: "set",
        v: [...obj].map((item: unknown, i) => encode(item, `${path}<item ${i}>`, seen)),
      };
    }
    if (obj instanceof Uint8Array)
      return { [TAG]: "bytes", v: Buffer.from(obj).toString("base64") };
    if (!isPlainObject(obj)) {
      const name = (obj as { constructor?: { name?: string } }).constructor?.name ?? "unknown";
      throw new NonSerializableError(path, `an instance of ${name}`);
    }
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(obj)) {
      const encoded = encode(item, path === "" ? key : `${path}.${key}`, seen);
      if (encoded !== undefined) out[key] = encoded;
    }
    return out;
  } finally {
    seen.delete(obj);
  }
}

function decode(_key: string, value: unknown): unknown {
  if (typeof value !== "object" || value === null || !(TAG in value)) return value;
  const tagged = value as Tagged;
  switch (tagged[TAG]) {
    case "date":
      return new Date(tagged.v as string);
    case "map":
      return new Map(tagged.v as [unknown, unknown][]);
    case "set":
      return new Set(tagged.v as unknown[]);
    case "bigint":
      return BigInt(tagged.v as string);
    case "bytes":
      return new Uint8Array(Buffer.from(tagged.v as string, "base64"));
    case "num":
      return Number(tagged.v);
    case "undef":
      return undefined;
    default:
      return value;
  }
}

/**
 * True when `value` is plain JSON that `JSON.stringify` encodes exactly (no Date, Map, Set,
 * BigInt, bytes, non-finite number, undefined array item, nor anything unstorable). The walk
 * allocates nothing, so checking first and then using the native encoder is the fast path.
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
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
    return JSON.stringify(encode(value, "", new Set())) ?? "null";
  },
  deserialize(text) {
    // A reviver makes JSON.parse several times slower; only tagged text needs one.
    return (text.includes(TAG) ? JSON.parse(text, decode) : JSON.parse(text)) as unknown;
  },
};

/**
 * Checks that `value` can be stored, throwing {@link NonSerializableError} with the path of the
 * first bad value. `root` names the value in the path (`payload.items[2].fn`).
 */
export function assertSerializable(value: unknown, root: string): void {
  encode(value, root, new Set());
}
