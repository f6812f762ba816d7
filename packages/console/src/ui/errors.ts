/**
 * Errors in words: what went wrong and what to do, for a person, not a code.
 */
import { ReinApiError } from "@rein/client";

const WORDS: Record<string, string> = {
  unauthorized: "The server did not accept this token. Check it and sign in again.",
  forbidden: "This token is not allowed to do that. Ask for a token with the needed scope.",
  not_found: "It is not there: it may have been deleted, or it belongs to another tenant.",
  stale_target:
    "Someone or something changed this thread since you opened it, so your answer was not applied.",
  thread_busy: "The thread is running right now. Wait a moment and try again.",
  ambiguous_resume: "More than one question is pending here; answer them one at a time.",
  no_matching_target:
    "Nothing pending matches what you answered; it may have been answered already.",
  invalid_answer: "The agent does not accept this answer.",
  invalid_input: "The server refused the request as malformed.",
  payload_too_large: "The answer is too large to send.",
  not_allowed:
    "The approval policy of this question does not let you answer it; nothing was applied.",
  bulk_refused: "Nothing was applied: some of the selected questions were refused.",
  count_mismatch: "Nothing was applied: the queue changed since you selected.",
  store_unavailable: "The server cannot reach its database right now. Try again shortly.",
};

/** One sentence (or two) for a person. */
export function describeError(error: unknown): string {
  if (error instanceof ReinApiError) {
    const general = WORDS[error.code] ?? "The server refused the request.";
    // The server's message is written for people too and names the specifics.
    return error.message && error.message !== general ? `${general} ${error.message}` : general;
  }
  if (error instanceof TypeError)
    return "The server could not be reached. Check that it is running and your connection.";
  if (error instanceof Error) return error.message;
  return "Something went wrong.";
}
