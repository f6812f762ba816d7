/**
 * Small graphs the server's tests (and `rein serve --graphs` in the CLI tests) run: a supervisor
 * whose two sub-agents pause at once with decision payloads and typed answers, a slow graph that
 * streams custom events, a question with a deadline, and two questions in one run.
 */
import { appendFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import {
  END,
  START,
  Send,
  StateGraph,
  append,
  lastValue,
  reducer,
  type Checkpointer,
} from "@rein/core";
import { z } from "zod";
import type { GraphFactory } from "../registry.ts";

/**
 * Lease timing from `REIN_LEASE_TTL_MS` (the multi-process tests shorten it so a killed worker's
 * run is taken over within seconds).
 */
function lease(): { ttlMs: number } | undefined {
  const ttl = Number(process.env["REIN_LEASE_TTL_MS"]);
  return Number.isFinite(ttl) && ttl > 0 ? { ttlMs: ttl } : undefined;
}

/** The answer a decision interrupt takes (SPEC §3 payload convention). */
export const decisionAnswer = z.discriminatedUnion("type", [
  z.object({ type: z.literal("accept") }),
  z.object({ type: z.literal("edit"), args: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal("respond"), text: z.string() }),
  z.object({ type: z.literal("ignore") }),
]);

/** A sub-agent that proposes an action, asks a person, then acts (at most once). */
function subAgent(store: Checkpointer, name: string, action: string) {
  return new StateGraph({ ticket: lastValue<string>(() => ""), log: append<string>() })
    .addNode("approve", async (s, ctx) => {
      const args = { ticket: s.ticket, amount: 50 };
      const decision = ctx.interrupt(
        {
          action,
          args,
          description: `${action} for ticket ${s.ticket}?`,
          allow: { accept: true, edit: true, respond: true, ignore: true },
        },
        { answer: decisionAnswer },
      );
      const steering = ctx.steering.map((x) => x.text).join("; ");
      if (decision.type === "ignore" || decision.type === "respond")
        return { log: `${name}: skipped (${decision.type})` };
      const used = decision.type === "edit" ? decision.args : args;
      const done = await ctx.once(action, () => `${action} ${JSON.stringify(used)}`);
      return { log: `${name}: ${done}${steering ? ` [steered: ${steering}]` : ""}` };
    })
    .addEdge(START, "approve")
    .addEdge("approve", END)
    .compile({ checkpointer: store, name });
}

/** A supervisor with two sub-agents that run in parallel and pause at once. */
export function desk(store: Checkpointer) {
  // Both sub-agents hand the ticket back in the same step: the last write wins.
  return new StateGraph({
    ticket: reducer<string>(
      (_a, b) => b,
      () => "T-1",
    ),
    log: append<string>(),
  })
    .addNode("plan", (s) => ({ log: `plan ${s.ticket}` }))
    .addNode("refund_agent", subAgent(store, "refund_agent", "refund"))
    .addNode("email_agent", subAgent(store, "email_agent", "email"))
    .addNode("report", (s) => ({ log: `report (${s.log.length} lines)` }))
    .addEdge(START, "plan")
    .addEdge("plan", "refund_agent")
    .addEdge("plan", "email_agent")
    .addEdge("refund_agent", "report")
    .addEdge("email_agent", "report")
    .addEdge("report", END)
    .compile({ checkpointer: store, name: "desk", lease: lease() });
}

/** Takes `steps` steps of `ms` each, emitting a custom event per step. */
export function slow(store: Checkpointer) {
  return new StateGraph({
    steps: lastValue<number>(() => 3),
    ms: lastValue<number>(() => 50),
    done: lastValue<number>(() => 0),
  })
    .addNode("tick", async (s, ctx) => {
      for (let i = 0; i < s.steps; i++) {
        await sleep(s.ms, undefined, { signal: ctx.signal }).catch(() => undefined);
        ctx.emit({ tick: i });
      }
      return { done: s.steps };
    })
    .addEdge(START, "tick")
    .addEdge("tick", END)
    .compile({ checkpointer: store, name: "slow", lease: lease() });
}

/** The steps of the `chain` graph, in order. */
export const CHAIN_STEPS = ["one", "two", "three", "four", "five", "six"] as const;

/**
 * Six steps in a row, each working `ms` (stopping early when the run's signal fires) and
 * appending its name to `steps`: a run long enough to outlive a database restart, whose `updates`
 * events a test counts against the steps its final state records.
 */
export function chain(store: Checkpointer) {
  let graph = new StateGraph({ ms: lastValue<number>(() => 50), steps: append<string>() });
  for (const name of CHAIN_STEPS)
    graph = graph.addNode(name, async (s, ctx) => {
      await sleep(s.ms, undefined, { signal: ctx.signal }).catch(() => undefined);
      return { steps: name };
    });
  let from: string = START;
  for (const name of CHAIN_STEPS) {
    graph = graph.addEdge(from, name);
    from = name;
  }
  return graph.addEdge(from, END).compile({ checkpointer: store, name: "chain", lease: lease() });
}

/** One question with a typed answer and an optional deadline. */
export function ask(store: Checkpointer) {
  return new StateGraph({
    question: lastValue<string>(() => "Proceed?"),
    timeoutMs: lastValue<number>(() => 0),
    answer: lastValue<string>(() => ""),
  })
    .addNode("ask", (s, ctx) => {
      const reply = ctx.interrupt(
        { question: s.question },
        {
          answer: z.object({ text: z.string().max(1000) }),
          ...(s.timeoutMs > 0 ? { timeout: s.timeoutMs, onTimeout: { text: "timed out" } } : {}),
        },
      );
      return { answer: reply.text };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: store, name: "ask", lease: lease() });
}

/** Every execution of the `ledger` graph's charge in this process: tag and idempotency key. */
export const ledgerCharges: { threadId: string; tag: string; key: string }[] = [];

/**
 * A charge with a side effect: it waits `ms` (stopping early when the run is cancelled), then
 * records the charge — in {@link ledgerCharges}, and as a line in the file `REIN_TEST_LEDGER`
 * names, so tests across processes count what ran, and how often.
 */
export function ledger(store: Checkpointer) {
  return new StateGraph({
    tag: lastValue<string>(() => ""),
    ms: lastValue<number>(() => 0),
    charged: append<string>(),
  })
    .addNode("charge", async (s, ctx) => {
      if (s.ms > 0) await sleep(s.ms, undefined, { signal: ctx.signal }).catch(() => undefined);
      if (ctx.signal.aborted) return {};
      const entry = {
        threadId: String(ctx.threadId),
        tag: s.tag,
        key: ctx.idempotencyKey("charge"),
      };
      ledgerCharges.push(entry);
      const file = process.env["REIN_TEST_LEDGER"];
      if (file) appendFileSync(file, `${JSON.stringify(entry)}\n`);
      return { charged: s.tag };
    })
    .addEdge(START, "charge")
    .addEdge("charge", END)
    .compile({ checkpointer: store, name: "ledger", lease: lease() });
}

/**
 * An approval, then a slow charge: after the answer, the continuation marks `continuing` in the
 * `REIN_TEST_LEDGER` file, works `ms`, then marks `charged` — a test kills the process between
 * the two to crash between an answer and its continuation.
 */
export function approveThenCharge(store: Checkpointer) {
  return new StateGraph({ ms: lastValue<number>(() => 1000), answer: lastValue<string>(() => "") })
    .addNode("approve", async (s, ctx) => {
      const answer = ctx.interrupt<string>({ question: "charge?" });
      const file = process.env["REIN_TEST_LEDGER"];
      const mark = (what: string): void => {
        if (file)
          appendFileSync(file, `${JSON.stringify({ threadId: String(ctx.threadId), what })}\n`);
      };
      mark("continuing");
      await sleep(s.ms);
      await ctx.once("charge", () => {
        mark("charged");
        return true;
      });
      return { answer };
    })
    .addEdge(START, "approve")
    .addEdge("approve", END)
    .compile({ checkpointer: store, name: "approve-then-charge", lease: lease() });
}

/**
 * Two steps, for rolling deploys: `prep` marks `prep` in the `REIN_TEST_LEDGER` file each time it
 * executes (a run continued from its checkpoint does not execute it again), then `charge` works
 * `ms` (stopping when the run's signal fires) and records `charged` inside `ctx.once`, so a step
 * re-run by a new owner after a hand-over charges once. Served by the rolling-deploy suites'
 * own module (`rolling-graphs.ts`), not in {@link graphs}.
 */
export function handover(store: Checkpointer) {
  const mark = (threadId: string, what: string): void => {
    const file = process.env["REIN_TEST_LEDGER"];
    if (file) appendFileSync(file, `${JSON.stringify({ threadId, what, pid: process.pid })}\n`);
  };
  return new StateGraph({ ms: lastValue<number>(() => 1000), steps: append<string>() })
    .addNode("prep", (_s, ctx) => {
      mark(String(ctx.threadId), "prep");
      return { steps: "prep" };
    })
    .addNode("charge", async (s, ctx) => {
      await sleep(s.ms, undefined, { signal: ctx.signal }).catch(() => undefined);
      if (ctx.signal.aborted) return {};
      await ctx.once("charge", () => {
        mark(String(ctx.threadId), "charged");
        return true;
      });
      return { steps: "charge" };
    })
    .addEdge(START, "prep")
    .addEdge("prep", "charge")
    .addEdge("charge", END)
    .compile({ checkpointer: store, name: "handover", lease: lease() });
}

/**
 * Two questions in one run (parallel tasks of the root graph): answering one leaves the run
 * paused on the other. Not in {@link graphs}; the suites that need it register it themselves.
 */
export function pair(store: Checkpointer) {
  return new StateGraph({ items: lastValue<string[]>(() => ["a", "b"]), out: append<string>() })
    .addNode("plan", () => ({}))
    .addNode("ask", (input: { item: string }, ctx) => ({
      out: `${input.item}: ${ctx.interrupt<string>({ item: input.item })}`,
    }))
    .addEdge(START, "plan")
    .addConditionalEdges("plan", (s) => s.items.map((item) => new Send("ask", { item })))
    .compile({ checkpointer: store, name: "pair", lease: lease() });
}

/** The test graphs by name, as a `--graphs` module exports them. */
export const graphs: Record<string, GraphFactory> = {
  desk,
  slow,
  ask,
  ledger,
  "approve-then-charge": approveThenCharge,
};

/**
 * The module's close hook (see `GraphModule`): a process shutting down calls it once, which the
 * lifecycle tests see as a line in the file `REIN_TEST_CLOSED` names.
 */
export function close(): void {
  const file = process.env["REIN_TEST_CLOSED"];
  if (file) appendFileSync(file, `closed ${process.pid}\n`);
}
