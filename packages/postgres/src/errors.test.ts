import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "@rein/core";
import { isRetryable, storeError } from "./connection.ts";
import { PostgresSaver } from "./saver.ts";

describe("PostgresSaver driver failures", () => {
  it("a server that refuses connections is a retryable StoreUnavailableError with the cause", async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const error: unknown = await PostgresSaver.connect({
      connectionString: "postgres://postgres@127.0.0.1:1/test",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).retryable).toBe(true);
    expect((error as StoreUnavailableError).cause).toBeInstanceOf(Error);
  });

  it("classifies connection loss as retryable and a refused statement as not", () => {
    expect(isRetryable(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isRetryable(Object.assign(new Error("terminating connection"), { code: "57P01" }))).toBe(
      true,
    );
    expect(isRetryable(Object.assign(new Error("syntax error"), { code: "42601" }))).toBe(false);
    const wrapped = storeError(Object.assign(new Error("value too long"), { code: "22001" }));
    expect(wrapped).toBeInstanceOf(StoreUnavailableError);
    expect((wrapped as StoreUnavailableError).retryable).toBe(false);
    expect((wrapped as StoreUnavailableError).details).toMatchObject({ driverCode: "22001" });
  });
});
