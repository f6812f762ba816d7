import { describe, expect, it } from "vitest";
import { value, type ResultRow } from "./result.ts";
import { checkTargets, targetsSection, viewOf, type ReportLike } from "./targets.ts";

const row = (
  scenario: string,
  variant: string,
  metric: string,
  rein: number,
  peer: number,
  floor?: number,
): ResultRow => ({
  scenario,
  variant,
  metric,
  rein: value("ms", rein),
  peer: value("ms", peer),
  ...(floor === undefined ? {} : { floor: value("ms", floor) }),
});

/** A run in which every measured target but K-flatness and the Postgres ones is met. */
const run: ReportLike[] = [
  { rows: [row("superstep", "MemorySaver", "per superstep (10-node chain)", 3, 100, 1)] },
  {
    rows: [
      row("pause-resume", "memory", "pause + resume round trip (500 threads)", 1, 25, 0.5),
      row("pause-resume", "sqlite", "pause + resume round trip (300 threads)", 1.4, 10, 1),
      row("pause-resume", "postgres", "pause + resume round trip (200 threads)", 10, 20, 2),
    ],
    facts: {
      "store calls per round trip, postgres": 16,
      "store writes per round trip, postgres": 7,
    },
  },
  {
    rows: [
      row("parallel-interrupts", "K=10", "per answer (all 10, one at a time)", 1, 5),
      row("parallel-interrupts", "K=1000", "per answer (10 of 1000 measured)", 4, 500),
    ],
    facts: {
      "decoded records per answer, K=10": 30,
      "decoded bytes per answer, K=10": 4096,
      "decoded records per answer, K=1000": 1200,
      "decoded bytes per answer, K=1000": 204800,
    },
  },
  {
    rows: [row("storage-growth", "sqlite", "total logical bytes after 200 steps", 300, 900)],
    facts: { "payload bytes": 200 },
  },
  {
    rows: [
      row("paused-threads", "sqlite", "logical bytes of the paused threads", 10_500, 9_000),
      row("paused-threads", "postgres", "resume one random paused thread to completion", 2, 4),
    ],
    facts: { "paused threads": 10, "payload bytes per paused thread": 40 },
  },
  {
    rows: [],
    facts: {
      "server-resumes perSecond, sqlite": 300,
      "server-resumes totalMs, sqlite": 3,
      "server-resumes serverMs, sqlite": 3,
      "server-resumes perSecond, postgres": 200,
      "server-resumes totalMs, postgres": 5,
      "server-resumes serverMs, postgres": 2.5,
    },
  },
];

describe("bench targets", () => {
  const results = checkTargets(viewOf(run));
  const find = (subject: string, target = ""): (typeof results)[number] => {
    const found = results.find((r) => r.subject === subject && r.target.includes(target));
    if (!found) throw new Error(`no target ${subject}`);
    return found;
  };

  it("marks each target met or not from the run's rows", () => {
    expect(find("10-node chain, per superstep, memory")).toMatchObject({ met: true });
    expect(find("pause + resume, memory").met).toBe(true);
    expect(find("pause + resume, SQLite (WAL)").met).toBe(true);
    expect(find("pause + resume, Postgres (loopback)", "faster").met).toBe(false);
    expect(find("pause + resume, Postgres (loopback)", "floor").met).toBe(false);
    expect(find("answer K parallel interrupts one by one (memory)")).toMatchObject({
      met: false,
      measured: "4.00× the K = 10 cost",
    });
    expect(find("200 steps × 1 KB appended, sqlite")).toMatchObject({
      met: true,
      measured: "1.50× the payload",
    });
    // 1,050 bytes per thread less a 40-byte payload: 1,010 ≤ 1,024.
    expect(find("paused thread, sqlite").met).toBe(true);
    expect(find("resume one random paused thread, Postgres")).toMatchObject({
      met: true,
      measured: "2.00× faster than LangGraph.js",
    });
  });

  it("compares one Postgres server with one SQLite server: CPU per resume and resumes per second", () => {
    // 5 ms against 3 ms of CPU: 1.67× > 1.5×; 200 against 300 resumes/s: 0.67× < 0.8×.
    expect(find("server CPU per HTTP resume, Postgres")).toMatchObject({
      met: false,
      measured: "1.67× SQLite's",
    });
    const rate = find("resumes per second of one server, Postgres");
    expect(rate).toMatchObject({ met: false, measured: "0.67× SQLite's" });
    expect(rate.cause).toContain(
      "Postgres: 5.00 ms of CPU per resume (2.50 ms in the server process), 200 resumes/s",
    );
  });

  it("gives a cause only for a target not met, with the run's measured facts in it", () => {
    expect(find("pause + resume, memory").cause).toBeUndefined();
    expect(find("pause + resume, Postgres (loopback)", "faster").cause).toContain(
      "16 store calls, 7 of them writes",
    );
    const k = find("answer K parallel interrupts one by one (memory)").cause ?? "";
    expect(k).toContain("30 records (4.0 KB) at K = 10");
    expect(k).toContain("1200 records (200.0 KB) at K = 1,000");
  });

  it("says when a run has no number for a target instead of guessing", () => {
    expect(find("200 steps × 1 KB appended, postgres")).toMatchObject({
      met: null,
      measured: "not measured",
    });
    expect(checkTargets(viewOf([])).every((r) => r.met === null)).toBe(true);
  });

  it("renders a table and one cause line per target not met", () => {
    const text = targetsSection(run).join("\n");
    expect(text).toContain("| answer K parallel interrupts one by one (memory) | per answer");
    expect(text.match(/^- \*\*/gm)).toHaveLength(results.filter((r) => r.met === false).length);
  });
});
