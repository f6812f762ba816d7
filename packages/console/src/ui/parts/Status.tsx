/**
 * A run's or thread's status as a small coloured label in words (`paused`, not `interrupted`);
 * the API's own value stays on the element for scripts and tests.
 */
import { statusWord } from "../runs.ts";

/** A status in words, with a class for its colour. */
export function Status({ value }: { value: string }) {
  return (
    <span className={`status status-${value}`} data-status={value}>
      {statusWord(value)}
    </span>
  );
}
