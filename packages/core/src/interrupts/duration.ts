/** Parsing of interrupt timeouts. */
import { InvalidInputError } from "../errors.ts";

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Milliseconds of a timeout given as a number of ms or a string like `"250ms"`, `"90s"`,
 * `"15m"`, `"2h"`, `"3d"`.
 *
 * @throws InvalidInputError for anything else.
 */
export function parseDuration(value: string | number): number {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  const match =
    typeof value === "string" ? /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(value.trim()) : null;
  const unit = match?.[2];
  if (!match || unit === undefined)
    throw new InvalidInputError(
      `Timeout ${JSON.stringify(value)} is not a duration; use milliseconds or "90s", "15m", "2h", "3d".`,
    );
  return Number(match[1]) * (UNITS[unit] ?? 1);
}
