/**
 * How often this process's deadline timers look for due steps (ladder reminders, escalations,
 * deadlines): `REIN_DEADLINE_INTERVAL_MS`, default 1 s. Any process's timer takes a step, so a
 * shorter interval only makes steps land closer to their due time.
 */

/** The deadline timer interval in milliseconds from `env` (default 1000; invalid: default). */
export function deadlineIntervalFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env["REIN_DEADLINE_INTERVAL_MS"]);
  return env["REIN_DEADLINE_INTERVAL_MS"] !== undefined && Number.isFinite(value) && value > 0
    ? value
    : 1000;
}
