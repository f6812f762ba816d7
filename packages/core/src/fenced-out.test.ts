/**
 * `fenced_out` says what really happened: a lease this attempt let expire, a lease another
 * attempt took over, or a lease row that is gone — each with its own `reason` for clients.
 */
import { describe, expect, it } from "vitest";
import { FencedOutError } from "./errors.ts";

describe("FencedOutError", () => {
  it("names a takeover by another attempt, with both tokens", () => {
    const error = new FencedOutError("t1", 3, 4);
    expect(error.code).toBe("fenced_out");
    expect(error.details).toMatchObject({ reason: "lease_taken_over", token: 3, currentToken: 4 });
    expect(error.message).toMatch(/Another attempt took over the lease of thread t1/);
    expect(error.message).not.toMatch(/another process owns/);
  });

  it("names an expired lease of this attempt", () => {
    const error = new FencedOutError("t1", 3, null, true);
    expect(error.details["reason"]).toBe("lease_expired");
    expect(error.message).toMatch(/expired before it could be renewed/);
  });

  it("names a lease row that is gone", () => {
    const error = new FencedOutError("t1", 3, null);
    expect(error.details["reason"]).toBe("lease_gone");
    expect(error.message).toMatch(/no longer in the store/);
  });
});
