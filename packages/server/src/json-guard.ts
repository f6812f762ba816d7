/**
 * Limits on the shape of JSON bodies beyond what a schema says: nesting depth and the number of
 * values. A body within the byte limit can still be a 100,000-deep array that overflows the stack
 * of whatever walks it later (the serializer, a store); it is refused at the edge instead.
 */
import { InvalidInputError } from "@rein/core";

/** Deepest nesting accepted in a request body. */
export const MAX_JSON_DEPTH = 64;

/**
 * Throws {@link InvalidInputError} when `value` nests deeper than {@link MAX_JSON_DEPTH}. Walks
 * iteratively, so the check itself cannot overflow.
 */
export function assertSaneJson(value: unknown): void {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== "object" || node === null) continue;
    if (depth >= MAX_JSON_DEPTH)
      throw new InvalidInputError(
        `The request body nests deeper than ${MAX_JSON_DEPTH} levels; flatten it.`,
        { maxDepth: MAX_JSON_DEPTH },
      );
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
}
