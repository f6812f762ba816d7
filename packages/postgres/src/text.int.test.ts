/**
 * PostgreSQL text cannot hold NUL (U+0000). A caller's value with one — a filter, a name, an
 * actor — is bad input: an InvalidInputError naming the statement and parameter, raised before
 * anything is sent, never a StoreUnavailableError for an outage that is not one.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  Command,
  InvalidInputError,
  lastValue,
  START,
  StateGraph,
  type ThreadId,
} from "@rein/core";
import type { PostgresSaver } from "./saver.ts";
import { createTestSaver, destroyTestSaver, probePostgres, redactUrl } from "./testing.ts";

const probe = await probePostgres();

/** The error a call fails with, or null. */
async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => null,
    (error: unknown) => error,
  );
}

describe.skipIf(!probe.available)(`NUL in text on postgres at ${redactUrl(probe.url)}`, () => {
  let saver: PostgresSaver | null = null;
  afterEach(async () => {
    vi.restoreAllMocks();
    if (saver) await destroyTestSaver(saver);
    saver = null;
  });

  it("a filter with a NUL is an InvalidInputError naming the parameter, and nothing is sent", async () => {
    saver = await createTestSaver(probe.url);
    const sent = vi.spyOn(saver.pool, "query");
    const error = await failure(saver.listInterrupts({ status: "pending", graph: "desk\u0000" }));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).details).toMatchObject({ reason: "nul_character" });
    expect((error as InvalidInputError).message).toContain('"desk\\u0000"');
    expect(sent).not.toHaveBeenCalled();
    // The same call without the NUL is answered.
    expect((await saver.listInterrupts({ status: "pending", graph: "desk" })).items).toEqual([]);
    expect(sent).toHaveBeenCalled();
  });

  it("an answer by an actor with a NUL is refused before the answer transaction and stores nothing", async () => {
    saver = await createTestSaver(probe.url);
    const graph = new StateGraph({ answer: lastValue<string>(() => "") })
      .addNode("ask", (_s, ctx) => ({ answer: ctx.interrupt<string>("Proceed?") }))
      .addEdge(START, "ask")
      .compile({ checkpointer: saver, name: "ask" });
    const paused = await graph.invoke({}, { threadId: "nul-actor" });
    const before = JSON.stringify([
      await saver.getThreadInterrupts("nul-actor" as ThreadId),
      await saver.listAudit({ threadId: "nul-actor" as ThreadId }),
    ]);
    const error = await failure(
      graph.resume({ threadId: "nul-actor" }, Command.resume("yes", { actor: "ann\u0000" })),
    );
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).details).toMatchObject({ reason: "nul_character" });
    const after = JSON.stringify([
      await saver.getThreadInterrupts("nul-actor" as ThreadId),
      await saver.listAudit({ threadId: "nul-actor" as ThreadId }),
    ]);
    expect(after).toBe(before);
    const done = await graph.resume({ threadId: "nul-actor" }, Command.resume("yes"));
    expect(done.status).toBe("done");
    expect(done.runId).toBe(paused.runId);
  });
});
