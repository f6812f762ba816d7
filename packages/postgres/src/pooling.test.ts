import { describe, expect, it } from "vitest";
import { pooledUrl } from "./pooling.ts";

describe("pooledUrl", () => {
  it("takes pgbouncer=true out of the URL the driver sees and says the URL is pooled", () => {
    expect(pooledUrl("postgres://u:p@h:6432/app?pgbouncer=true&sslmode=require")).toEqual({
      connectionString: "postgres://u:p@h:6432/app?sslmode=require",
      pooled: true,
    });
  });

  it("leaves a URL without the parameter as it is, and pgbouncer=false unpooled", () => {
    expect(pooledUrl("postgres://h/app")).toEqual({
      connectionString: "postgres://h/app",
      pooled: false,
    });
    expect(pooledUrl("postgres://h/app?pgbouncer=false").pooled).toBe(false);
  });
});
