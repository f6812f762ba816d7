/**
 * Refusals in the protocol's shape: a Rein error (or a protocol-level one) becomes
 * `{ type: "error", id, error, message, details }` with an HTTP 4xx status, never a 500 for bad
 * input. `details.code` keeps Rein's own code so a client can tell `thread_interrupted` from
 * `stale_target`.
 */
import { ReinError } from "@rein/core";
import { reinErrorResponse } from "../../errors.ts";
import type { CommandError, ProtocolErrorCode } from "./protocol.ts";

/** A refusal raised by the protocol layer itself (a malformed command, an unknown method). */
export class ProtocolRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: ProtocolErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "ProtocolRefusal";
  }
}

/** The protocol's error code for a Rein error code (the HTTP status stays Rein's). */
function protocolCodeOf(code: string, details: Record<string, unknown>): ProtocolErrorCode {
  switch (code) {
    case "invalid_input":
    case "invalid_answer":
    case "invalid_id":
    case "invalid_update":
    case "non_serializable":
    case "ambiguous_resume":
    case "thread_interrupted":
    case "thread_busy":
    case "run_in_progress":
    case "payload_too_large":
      return "invalid_argument";
    case "stale_target":
    case "no_matching_target":
      return "no_such_interrupt";
    case "not_found":
      return details["what"] === "interrupt"
        ? "no_such_interrupt"
        : details["what"] === "checkpoint"
          ? "no_such_checkpoint"
          : "no_such_run";
    case "unauthorized":
    case "forbidden":
    case "not_allowed":
      return "permission_denied";
    default:
      return "unknown_error";
  }
}

/**
 * Status and body of a refused command (or stream request). Errors that are neither Rein's nor
 * the protocol layer's are 500 `unknown_error`, logged by the caller.
 */
export function commandErrorOf(
  error: unknown,
  id: number | null,
): { status: number; body: CommandError } {
  if (error instanceof ProtocolRefusal)
    return {
      status: error.status,
      body: {
        type: "error",
        id,
        error: error.code,
        message: error.message,
        details: error.details,
      },
    };
  if (ReinError.is(error)) {
    const { status, body } = reinErrorResponse(error);
    return {
      status,
      body: {
        type: "error",
        id,
        error: protocolCodeOf(body.error, body.details),
        message: body.message,
        details: { code: body.error, ...body.details },
      },
    };
  }
  return {
    status: 500,
    body: {
      type: "error",
      id,
      error: "unknown_error",
      message: "The server failed to handle this command; it was logged.",
    },
  };
}
