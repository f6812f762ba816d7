/**
 * Reading a run stream's SSE ids in tests: `<attempt>:<n>`, where attempts sort by their start
 * and `n` counts within one attempt (docs/server.md). A stream's ids must keep growing in this
 * order, so a reconnect's Last-Event-ID is never ambiguous.
 */

/** The attempt an id counts in, and its number there. */
export function parseEventId(id: string): { attempt: string; n: number } {
  const cut = id.lastIndexOf(":");
  return { attempt: id.slice(0, cut), n: Number(id.slice(cut + 1)) };
}

/** Orders two ids as the stream sends them: by attempt, then by number. */
export function compareEventIds(x: string, y: string): number {
  const a = parseEventId(x);
  const b = parseEventId(y);
  if (a.attempt !== b.attempt) return a.attempt < b.attempt ? -1 : 1;
  return a.n - b.n;
}

/** Whether `id` has the `<attempt>:<n>` form. */
export function isAttemptEventId(id: string): boolean {
  return /^[0-9a-z]{9,}\.[\w-]+:\d+$/.test(id);
}
