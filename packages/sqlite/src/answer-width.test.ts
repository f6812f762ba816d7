/**
 * One answer among K paused tasks of a step reads what one among ten reads: the kinds of the
 * answered task's result (by the unique key) and counts from indexes, never a row per waiting
 * task. Counted by wrapping the driver's statements, so a read of the whole step shows up here.
 */
import { afterEach, describe, expect, it } from "vitest";
import { append, Command, END, lastValue, Send, START, StateGraph } from "@rein/core";
import { threadId } from "@rein/core/testing";
import { sqlite } from "./driver.ts";
import { SqliteSaver } from "./saver.ts";
import { prepareStatements } from "./statements.ts";

type Method = (this: { sourceSQL: string }, ...args: unknown[]) => unknown;
type Methods = Record<"run" | "get" | "all" | "iterate", Method>;

/** Records the text of every statement run on any connection while installed. */
function recordStatements() {
  const proto = sqlite.StatementSync.prototype as unknown as Methods;
  const names = ["run", "get", "all", "iterate"] as const;
  const originals = names.map((name) => [name, proto[name]] as const);
  let seen: string[] = [];
  for (const [name, original] of originals) {
    proto[name] = function (...args) {
      seen.push(this.sourceSQL.replace(/\s+/g, " ").trim());
      return original.apply(this, args);
    };
  }
  return {
    take(): string[] {
      const taken = seen;
      seen = [];
      return taken;
    },
    restore(): void {
      for (const [name, original] of originals) proto[name] = original;
    },
  };
}

/** K tasks fanned out with Send, each asking one question. */
function fanGraph(saver: SqliteSaver) {
  return new StateGraph({ items: lastValue<number[]>(() => []), out: append<number>() })
    .addNode("fan", () => ({}))
    .addNode("work", (arg: { i: number }, ctx) => ({ out: ctx.interrupt<number>({ i: arg.i }) }))
    .addEdge(START, "fan")
    .addConditionalEdges("fan", (s) => s.items.map((i) => new Send("work", { i })), ["work"])
    .addEdge("work", END)
    .compile({ checkpointer: saver });
}

/** The plan SQLite picks for `sql`, one detail line per step. */
function planOf(saver: SqliteSaver, sql: string, params: string[] | Record<string, string>) {
  const statement = saver.db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  return (Array.isArray(params) ? statement.all(...params) : statement.all(params))
    .map((row) => String(row["detail"]))
    .join(" | ");
}

describe("one answer among K paused tasks (SQLite)", () => {
  const savers: SqliteSaver[] = [];
  afterEach(async () => {
    for (const saver of savers.splice(0)) await saver.close();
  });

  /** The statements of answering the first of `k` paused tasks, and of the rest. */
  async function answerStatements(k: number) {
    const saver = new SqliteSaver({ path: ":memory:" });
    savers.push(saver);
    const graph = fanGraph(saver);
    const items = Array.from({ length: k }, (_, i) => i);
    const paused = await graph.invoke({ items }, { threadId: "t" });
    expect(paused.status).toBe("interrupted");
    const ids = (await saver.getThreadInterrupts(threadId("t"), "pending")).map((i) => i.id);
    expect(ids).toHaveLength(k);
    const recorder = recordStatements();
    try {
      const first = await graph.invoke(Command.resumeMap({ [ids[0] as string]: 7 }), {
        threadId: "t",
      });
      expect(first.status).toBe("interrupted");
      const statements = recorder.take();
      // The other answers, all at once: the step ends, every result is read for its barrier.
      const rest = Object.fromEntries(ids.slice(1).map((id) => [id, 1]));
      const done = await graph.invoke(Command.resumeMap(rest), { threadId: "t" });
      expect(done.status).toBe("done");
      expect(done.values.out).toHaveLength(k);
      return statements;
    } finally {
      recorder.restore();
    }
  }

  it("runs the same statements at K = 200 as at K = 10, none reading every result of the step", async () => {
    const small = await answerStatements(10);
    const large = await answerStatements(200);
    expect(large).toEqual(small);
    const sql = prepareStatements(savers[0]!.db);
    const normal = (text: string) => text.replace(/\s+/g, " ").trim();
    // The whole step's kinds, or its result bodies: a row per waiting task.
    expect(large).not.toContain(normal(sql.taskResultKinds.sourceSQL));
    expect(large).not.toContain(normal(sql.listTaskResults.sourceSQL));
    expect(large).toContain(normal(sql.stepKinds.sourceSQL));
  });

  it("reads the answered task's kind by its key and the step's counts from indexes alone", () => {
    const saver = new SqliteSaver({ path: ":memory:" });
    savers.push(saver);
    const sql = prepareStatements(saver.db);
    const plan = planOf(saver, sql.stepKinds.sourceSQL, {
      thread: "t",
      stream: "",
      checkpoint: "c",
      focus: '["a"]',
    });
    expect(plan).toMatch(
      /SEARCH task_results USING INDEX sqlite_autoindex_task_results_1 \(thread_id=\? AND stream=\? AND checkpoint_id=\? AND task_id=\?\)/,
    );
    expect(plan).toMatch(
      /SEARCH task_results USING COVERING INDEX sqlite_autoindex_task_results_1 \(thread_id=\? AND stream=\? AND checkpoint_id=\?\)/,
    );
    expect(plan).toMatch(/SEARCH task_results USING COVERING INDEX task_results_paused/);
    expect(plan).not.toMatch(/SCAN task_results/);
  });
});
