import { describe, expect, it } from "vitest";
import { href, parseRoute } from "./router.ts";

describe("hash routes", () => {
  it("round-trips every screen, ids with reserved characters included", () => {
    for (const route of [
      { screen: "queue" },
      { screen: "thread", threadId: "ticket 1/2" },
      { screen: "decision", threadId: "t:1", interruptId: "i_a-b" },
      { screen: "webhooks", subscriptionId: null },
      { screen: "webhooks", subscriptionId: "wh_a/b" },
    ] as const)
      expect(parseRoute(href(route))).toEqual(route);
  });

  it("falls back to the queue for unknown hashes", () => {
    expect(parseRoute("")).toEqual({ screen: "queue" });
    expect(parseRoute("#/nowhere")).toEqual({ screen: "queue" });
    expect(parseRoute("#/threads/t1/interrupts")).toEqual({ screen: "thread", threadId: "t1" });
  });
});
