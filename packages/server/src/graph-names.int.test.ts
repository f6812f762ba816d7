/**
 * A graph compiled without `name` is known by the key it is served under: over real HTTP, its
 * thread's interrupt shows in the queue (and filters) under that key, never as `graph-<hash>`.
 */
import { describe, expect, it } from "vitest";
import { END, START, StateGraph, lastValue, type Checkpointer } from "@rein/core";
import {
  TOKENS,
  client,
  postgresBackend,
  serveOn,
  sqliteBackend,
  type Backend,
} from "./testing/harness.ts";

/** One question, compiled without a name, as a newcomer coming from LangGraph writes it. */
function unnamed(store: Checkpointer) {
  return new StateGraph({ answer: lastValue<string>(() => "") })
    .addNode("ask", (_s, ctx) => ({ answer: ctx.interrupt<string>({ question: "Proceed?" }) }))
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: store });
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`an unnamed graph's name on ${backend.name}`, () => {
    const served = serveOn(backend, { graphs: { approvals: unnamed } }, "all");

    it("the queue shows the registry key, not graph-<hash>", async () => {
      const alice = client(served.url, TOKENS["alice"]!.token);
      expect(
        (await alice("POST", "/threads", { graph: "approvals", threadId: "t-1" })).status,
      ).toBe(201);
      const run = await alice<{ status: string }>("POST", "/threads/t-1/runs", {
        input: {},
        wait: true,
      });
      expect(run.body.status).toBe("interrupted");
      const queue = await alice<{ items: { graph: string }[]; total: number }>(
        "GET",
        "/interrupts?status=pending&threadId=t-1",
      );
      expect(queue.body.items.map((item) => item.graph)).toEqual(["approvals"]);
      const byKey = await alice<{ total: number }>("GET", "/interrupts?graph=approvals");
      expect(byKey.body.total).toBe(1);
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
