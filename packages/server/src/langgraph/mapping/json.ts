/** The JSON shapes every mapping of the protocol layer reads: plain objects, one test for them. */

/** A JSON object. */
export type Dict = Record<string, unknown>;

/** Whether a value is a plain object (not null, not an array). */
export function isRecord(value: unknown): value is Dict {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
