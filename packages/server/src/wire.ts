/**
 * JSON for the wire. State may hold the serializer's tagged types (BigInt, Map, Set, Uint8Array)
 * that `JSON.stringify` cannot write or writes as `{}`; they are sent as plain JSON instead:
 * BigInt as a decimal string, Map as an object, Set as an array, bytes as base64.
 */

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  return value;
}

/** `JSON.stringify` that never throws on Rein's stored types. */
export function toWireJson(value: unknown): string {
  return JSON.stringify(value, replacer) ?? "null";
}
