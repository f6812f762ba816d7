/**
 * Contracts of the pending page of a run result: with more pending interrupts than
 * {@link RUN_RESULT_INTERRUPT_LIMIT}, a result carries the oldest page and the total count, and
 * every pending interrupt can still be found (by paging `listInterrupts`) and answered.
 */
import { it, expect } from "vitest";
import { Command, RUN_RESULT_INTERRUPT_LIMIT, type ThreadId } from "../../index.ts";
import { fanOut } from "./graphs.ts";
import { Counter, threadName, type RuntimeEnv } from "./harness.ts";

/** More parallel questions than one result carries. */
const WIDTH = RUN_RESULT_INTERRUPT_LIMIT + 20;

/** A fan-out answered one by one takes a while on a networked store. */
const TIMEOUT_MS = 120_000;

/** Contracts of the page of pending interrupts in a run result. */
export function pendingPageContracts(env: RuntimeEnv): void {
  it(
    "a result holds the oldest page of pending interrupts and their count; paging listInterrupts answers them all",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = fanOut(saver, counter);
      const threadId = threadName("page");
      const items = Array.from({ length: WIDTH }, (_, i) => `w${i}`);
      const r1 = await graph.invoke({ items }, { threadId });
      expect(r1.status).toBe("interrupted");
      expect(r1.pendingCount).toBe(WIDTH);
      const oldest = await saver.getThreadInterrupts(threadId as ThreadId, "pending");
      expect(r1.interrupts.map((i) => i.id)).toEqual(
        oldest.slice(0, RUN_RESULT_INTERRUPT_LIMIT).map((i) => i.id),
      );
      let last = r1;
      let answered = 0;
      for (;;) {
        const page = await saver.listInterrupts({
          threadId: threadId as ThreadId,
          status: "pending",
          limit: 50,
        });
        if (page.items.length === 0) break;
        for (const pending of page.items) {
          last = await graph.resume({ threadId }, Command.resumeMap({ [pending.id]: "ok" }));
          answered += 1;
          expect(last.pendingCount).toBe(WIDTH - answered);
          expect(last.interrupts.length).toBe(
            Math.min(RUN_RESULT_INTERRUPT_LIMIT, WIDTH - answered),
          );
        }
      }
      expect(answered).toBe(WIDTH);
      expect(last.status).toBe("done");
      expect(last.pendingCount).toBe(0);
      expect([...last.values.out].sort()).toEqual(items.map((item) => `${item}:ok`).sort());
      // Each work task ran once to ask and once with its answer; no paused sibling re-ran.
      for (const item of items) expect(counter.of(item)).toBe(2);
    }),
    TIMEOUT_MS,
  );

  it(
    "a result's page reads the same first-hand, after later answers, copied, serialized or replaced",
    env.withStore(async (saver) => {
      const graph = fanOut(saver, new Counter());
      const threadId = threadName("page-read");
      const r1 = await graph.invoke({ items: ["a", "b", "c"] }, { threadId });
      const r2 = await graph.invoke(
        Command.resumeMap({ [(r1.interrupts[0] as { id: string }).id]: "ok" }),
        { threadId },
      );
      // r2's page is read after a later answer changed the store: it still shows r2's moment.
      const pendingAtR2 = (await saver.getThreadInterrupts(threadId as ThreadId, "pending")).map(
        (i) => i.id,
      );
      await graph.invoke(Command.resumeMap({ [pendingAtR2[0] as string]: "ok" }), { threadId });
      expect(r2.pendingCount).toBe(2);
      expect(r2.interrupts.map((i) => i.id)).toEqual(pendingAtR2);
      expect(r2.interrupts.every((i) => i.status === "pending")).toBe(true);
      const asJson = JSON.parse(JSON.stringify(r2)) as { interrupts: { id: string }[] };
      expect(asJson.interrupts.map((i) => i.id)).toEqual(pendingAtR2);
      expect(structuredClone(r2).interrupts.map((i) => i.id)).toEqual(pendingAtR2);
      expect({ ...r2 }.interrupts).toBe(r2.interrupts);
      expect(Object.keys(r2)).toContain("interrupts");
      r2.interrupts = [];
      expect(r2.interrupts).toEqual([]);
    }),
  );
}
