/**
 * Contracts of typed answers: an answer is checked with the interrupt's real zod schema
 * (refinements, dates) before anything is stored wherever the process knows that schema, and an
 * answer that passed only the stored JSON Schema never fails the run: the question is asked again.
 */
import { z } from "zod";
import { it, expect } from "vitest";
import {
  Command,
  defineInterrupt,
  InvalidAnswerError,
  lastValue,
  START,
  StateGraph,
  type Checkpointer,
  type InterruptId,
  type StreamEvent,
  type ThreadId,
} from "../../index.ts";
// Not part of the public surface: stands for a process that never ran the node.
import { forgetRememberedAnswerSchemas } from "../../interrupts/answer-schemas.ts";
import { threadName, rejection, type RuntimeEnv } from "./harness.ts";

/** A refund amount in whole fives: a refinement JSON Schema cannot say. */
const inFives = z.object({
  amount: z.number().refine((n) => n % 5 === 0, "amount must be a multiple of 5"),
});

/** Declared once, beside the graph's code: every process that loads it checks answers with it. */
const shipDate = defineInterrupt<{ order: string }, { at: Date }>("contracts.ship-date", {
  answer: z.object({ at: z.date() }),
});

function refundGraph(saver: Checkpointer) {
  return new StateGraph({ amount: lastValue<number>(() => 0) })
    .addNode("ask", (_s, ctx) => ({
      amount: ctx.interrupt({ question: "how much?" }, { answer: inFives }).amount,
    }))
    .addEdge(START, "ask")
    .compile({ checkpointer: saver, name: "typed-refund" });
}

function shipGraph(saver: Checkpointer) {
  return new StateGraph({ at: lastValue<string>(() => "") })
    .addNode("ask", () => ({ at: shipDate.ask({ order: "o-1" }).at.toISOString() }))
    .addEdge(START, "ask")
    .compile({ checkpointer: saver, name: "typed-ship" });
}

async function answersIn(saver: Checkpointer, threadId: string): Promise<number> {
  const audit = await saver.listAudit({ threadId: threadId as ThreadId });
  return audit.items.filter((a) => a.action === "answer").length;
}

/** Contracts of typed answers. */
export function typedAnswerContracts(env: RuntimeEnv): void {
  it(
    "an answer that fails a refinement is an InvalidAnswerError before anything is stored, in the process that asked",
    env.withStore(async (saver) => {
      const graph = refundGraph(saver);
      const threadId = threadName("refine");
      const r1 = await graph.invoke({}, { threadId });
      const bad = await rejection(graph.resume({ threadId }, Command.resume({ amount: 7 })));
      expect(bad).toBeInstanceOf(InvalidAnswerError);
      expect((bad as InvalidAnswerError).message).toContain("multiple of 5");
      expect((bad as InvalidAnswerError).details).toMatchObject({
        interruptId: r1.interrupts[0]?.id,
        checkedWith: "schema",
      });
      expect((await saver.getInterrupt(r1.interrupts[0]?.id as InterruptId))?.status).toBe(
        "pending",
      );
      expect(await answersIn(saver, threadId)).toBe(0);
      const done = await graph.resume({ threadId }, Command.resume({ amount: 10 }));
      expect(done.status).toBe("done");
      expect(done.values.amount).toBe(10);
    }),
  );

  it(
    "a defineInterrupt declaration checks answers (z.date()) in a process that never ran the node",
    env.withStore(async (saver) => {
      const threadId = threadName("declared");
      const r1 = await shipGraph(saver).invoke({}, { threadId });
      expect(r1.status).toBe("interrupted");
      // Another process: it loaded the graph's code (and so the declaration), nothing else.
      forgetRememberedAnswerSchemas();
      const other = shipGraph(saver);
      const bad = await rejection(other.resume({ threadId }, Command.resume({ at: "tomorrow" })));
      expect(bad).toBeInstanceOf(InvalidAnswerError);
      expect((await saver.getInterrupt(r1.interrupts[0]?.id as InterruptId))?.status).toBe(
        "pending",
      );
      expect(await answersIn(saver, threadId)).toBe(0);
      const at = new Date("2030-01-02T03:04:05.000Z");
      const done = await other.resume({ threadId }, Command.resume({ at }));
      expect(done.status).toBe("done");
      expect(done.values.at).toBe(at.toISOString());
      // The queue shows which declaration an interrupt expects.
      const listed = await other.listInterrupts({ status: "answered", threadId });
      expect(listed.items[0]?.answerSchema).toMatchObject({
        "x-rein-interrupt": "contracts.ship-date",
      });
    }),
  );

  it(
    "an answer the real schema rejects on the re-run never fails the run: the question is asked again",
    env.withStore(async (saver) => {
      const threadId = threadName("asked-again");
      const r1 = await refundGraph(saver).invoke({}, { threadId });
      const first = r1.interrupts[0]?.id as InterruptId;
      // A process that never ran the node knows only the stored JSON Schema, which cannot say
      // "multiple of 5": it accepts 7.
      forgetRememberedAnswerSchemas();
      const events: StreamEvent[] = [];
      for await (const event of refundGraph(saver).stream(Command.resume({ amount: 7 }), {
        threadId,
        streamMode: ["debug"],
      }))
        events.push(event);
      const end = events.find((e) => e.type === "end");
      const result = end?.type === "end" ? end.result : undefined;
      expect(result?.status).toBe("interrupted");
      const again = result?.interrupts[0];
      expect(again?.id).not.toBe(first);
      expect(again?.payload).toEqual({ question: "how much?" });
      expect(again?.status).toBe("pending");
      expect(result?.rejectedAnswers).toEqual([
        expect.objectContaining({ interruptId: first, askedAgainAs: again?.id }),
      ]);
      expect(result?.rejectedAnswers?.[0]?.message).toContain("multiple of 5");
      expect((await saver.getInterrupt(first))?.status).toBe("superseded");
      expect(events.some((e) => e.type === "debug" && /asked again/.test(e.message))).toBe(true);
      expect((await saver.getRun(result?.runId as never))?.status).toBe("interrupted");
      // The new question is answerable, and now this process knows the real schema.
      const stillBad = await rejection(
        refundGraph(saver).resume({ threadId }, Command.resume({ amount: 8 })),
      );
      expect(stillBad).toBeInstanceOf(InvalidAnswerError);
      const done = await refundGraph(saver).resume({ threadId }, Command.resume({ amount: 15 }));
      expect(done.status).toBe("done");
      expect(done.values.amount).toBe(15);
    }),
  );
}
