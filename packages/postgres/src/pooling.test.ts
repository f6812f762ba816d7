import { describe, expect, it } from "vitest";
import { hostList, pooledUrl } from "./pooling.ts";

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

describe("hostList", () => {
  it("splits a multi-host URL into one URL per host and reads target_session_attrs", () => {
    expect(
      hostList("postgres://u:p@a:5432,b:5433/app?target_session_attrs=read-write&sslmode=require"),
    ).toEqual({
      urls: [
        "postgres://u:p@a:5432/app?sslmode=require",
        "postgres://u:p@b:5433/app?sslmode=require",
      ],
      readWrite: true,
    });
  });

  it("is null for a URL with one host", () => {
    expect(hostList("postgres://u@a:5432/app")).toBeNull();
  });
});
