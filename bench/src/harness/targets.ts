/**
 * The targets the storage work set for Rein, checked against one bench run: each target's
 * measured value, whether it is met, and for one that is not, the measured cause and what
 * meeting it would take. RESULTS.md shows them above the scenario tables.
 */
import { floorRatio, headline, ratio, type ResultRow } from "./result.ts";

/** What the targets read of one scenario's report. */
export interface ReportLike {
  rows: readonly ResultRow[];
  facts?: Record<string, number>;
}

/** What a target reads from a run: its rows and its facts. */
export interface RunView {
  /** The first row of `scenario` / `variant` whose metric starts with `metric`. */
  row(scenario: string, variant: string, metric: string): ResultRow | undefined;
  /** A fact a scenario reported (see `ScenarioOutput.facts`). */
  fact(name: string): number | undefined;
}

/** One target checked against a run. */
export interface TargetResult {
  /** What is measured. */
  subject: string;
  /** The target, in words. */
  target: string;
  /** The measured value, in words; `not measured` when the run has no number for it. */
  measured: string;
  /** `null` when the run has no number for it. */
  met: boolean | null;
  /** For a target not met: the measured cause and what meeting it would take. */
  cause?: string;
}

/** A target: how to measure it from a run, and why it is not met when it is not. */
interface Target {
  subject: string;
  target: string;
  /** The measured value and whether it meets the target, or `undefined` when not measured. */
  measure(run: RunView): { value: string; met: boolean } | undefined;
  cause(run: RunView): string;
}

const times = (x: number): string => `${x >= 10 ? x.toFixed(1) : x.toFixed(2)}×`;
const count = (x: number | undefined): string => (x === undefined ? "?" : String(Math.round(x)));
const kb = (chars: number | undefined): string =>
  chars === undefined ? "?" : `${(chars / 1024).toFixed(1)} KB`;

/** How a row's ratio is read: Rein ÷ floor must stay at most the limit, peer ÷ Rein reach it. */
const AGAINST = {
  floor: { ratio: floorRatio, words: "the floor", meets: (x: number, limit: number) => x <= limit },
  peer: {
    ratio,
    words: "faster than LangGraph.js",
    meets: (x: number, limit: number) => x >= limit,
  },
} as const;

/** A target on the ratio of one row against the floor or the peer. */
function rowRatio(
  against: keyof typeof AGAINST,
  scenario: string,
  variant: string,
  metric: string,
  limit: number,
) {
  const how = AGAINST[against];
  return (run: RunView): { value: string; met: boolean } | undefined => {
    const row = run.row(scenario, variant, metric);
    const x = row ? how.ratio(row) : null;
    return x === null ? undefined : { value: `${times(x)} ${how.words}`, met: how.meets(x, limit) };
  };
}

/** A store's calls and writes per pause + resume, as pause-resume counted them. */
function calls(run: RunView, store: string): string {
  const all = run.fact(`store calls per round trip, ${store}`);
  const writes = run.fact(`store writes per round trip, ${store}`);
  return `${count(all)} store calls, ${count(writes)} of them writes`;
}

/** The median pause + resume round trip of one system on one store, in words. */
function roundTrip(run: RunView, store: string, system: "rein" | "floor"): string {
  const row = run.row("pause-resume", store, "pause + resume round trip");
  const cell = row ? (system === "rein" ? row.rein : row.floor) : undefined;
  const ms = cell ? headline(cell) : null;
  return ms === null ? "?" : `${ms >= 1 ? ms.toFixed(2) : ms.toFixed(3)} ms`;
}

/** The per-answer median at width `k` of scenario 3. */
function perAnswer(run: RunView, k: number): number | null {
  const row = run.row("parallel-interrupts", `K=${k}`, "per answer");
  return row ? headline(row.rein) : null;
}

/** Logical bytes per paused thread of one store, and the payload each thread carries. */
function pausedThread(run: RunView, store: string): { bytes: number; payload: number } | undefined {
  const row = run.row("paused-threads", store, "logical bytes of the paused threads");
  const total = row ? headline(row.rein) : null;
  const threads = run.fact("paused threads");
  const payload = run.fact("payload bytes per paused thread");
  if (total === null || !threads || payload === undefined) return undefined;
  return { bytes: total / threads, payload };
}

/** A fact of the server-resumes scenario for one store. */
function served(run: RunView, key: "perSecond" | "totalMs" | "serverMs", store: string) {
  return run.fact(`server-resumes ${key}, ${store}`);
}

const ms2 = (x: number | undefined): string => (x === undefined ? "?" : `${x.toFixed(2)} ms`);

/** What one HTTP resume costs on each store, in words, from the server-resumes facts. */
function serverCosts(run: RunView): string {
  const per = (store: string): string =>
    `${ms2(served(run, "totalMs", store))} of CPU per resume (${ms2(served(run, "serverMs", store))} in the server process), ` +
    `${count(served(run, "perSecond", store))} resumes/s`;
  return `SQLite: ${per("sqlite")}; Postgres: ${per("postgres")} (the rest is the Postgres backends).`;
}

/** The ratio of a server-resumes fact between Postgres and SQLite. */
function storeRatio(key: "perSecond" | "totalMs", limit: number, meets: "atMost" | "atLeast") {
  return (run: RunView): { value: string; met: boolean } | undefined => {
    const pgValue = served(run, key, "postgres");
    const sqliteValue = served(run, key, "sqlite");
    if (pgValue === undefined || !sqliteValue) return undefined;
    const x = pgValue / sqliteValue;
    return {
      value: `${times(x)} SQLite's`,
      met: meets === "atMost" ? x <= limit : x >= limit,
    };
  };
}

const SERVER_CAUSE =
  "An HTTP resume on Postgres is four round trips one after the other (the thread with its head; the lease with the " +
  "answer's reads; the answer with the continuation's reads; the commit with the release) where SQLite makes the same " +
  "calls in-process, and each is a statement the backend parses, plans (cached), executes and commits with a WAL " +
  "flush. With `--postgres` the server also sends the run's events and the queue's change notice as NOTIFYs. " +
  "`npm run bench:backends` shows where the backends' time goes: most of it inside the answer's server-side " +
  "function (`answer_batch`: the checked answer write, which moves one interrupt row out of its pending indexes, " +
  "deletes the paused task result, appends the audit line and sets the run running, then the continuation's reads), " +
  "then the lease and the three head reads; forcing generic plans saves about a sixth. ";

const TARGETS: Target[] = [
  {
    subject: "10-node chain, per superstep, memory",
    target: "≤ 4× the floor of a minimal superstep loop",
    measure: rowRatio("floor", "superstep", "MemorySaver", "per superstep", 4),
    cause: () =>
      "The floor awaits the node, builds the next state object and stores one JSON string per step. Rein runs each node as a task " +
      "(a content-derived task id, an async context so `interrupt()` and `once()` find their task, a trace span, a task result), " +
      "applies the writes through versioned channels and commits a checkpoint with its blobs through the serializer and the fenced " +
      "store. Profiles of this scenario (`node --cpu-prof`) spread the time over that machinery (garbage collection about a fifth, " +
      "encoding, id hashing, async-context hooks), with no single hot spot. It would take a separate fast path for a one-task step " +
      "that cannot pause (no async-context scope, no span while tracing is off, no task record), a memory store that keeps records " +
      "without encoding them, and counters instead of ids as channel versions.",
  },
  {
    subject: "pause + resume, memory",
    target: "≥ 20× faster than LangGraph.js",
    measure: rowRatio("peer", "pause-resume", "memory", "pause + resume round trip", 20),
    cause: (run) =>
      `A round trip makes ${calls(run, "memory")} and takes ${roundTrip(run, "memory", "rein")}, where the floor ` +
      `storing the same checkpoints takes ${roundTrip(run, "memory", "floor")}: the time is the runtime's own, not ` +
      "storage. The memory store runs the protocol of a durable store (the lease, the fence on every write, the run row, the " +
      "answer with its audit line, the reads that decide what to run) and encodes every record it keeps, so that a caller can " +
      "never change stored state by mutating what it got back. Each call takes the lease from the store and its last write " +
      "frees it, as the one-writer rule requires between calls (calls queued in one process are handed the lease without " +
      "a store call, which this sequential round trip never does). It would take a memory store that keeps decoded, " +
      "frozen records and the one-task fast path of the superstep target.",
  },
  {
    subject: "pause + resume, SQLite (WAL)",
    target: "≤ 1.5× the floor of the same number of small WAL transactions",
    measure: rowRatio("floor", "pause-resume", "sqlite", "pause + resume round trip", 1.5),
    cause: (run) =>
      `A round trip makes ${calls(run, "sqlite")} (each write one transaction) and takes ` +
      `${roundTrip(run, "sqlite", "rein")}; the floor's commits take ${roundTrip(run, "sqlite", "floor")}. ` +
      `${roundTrip(run, "memory", "rein")} of Rein's time is the runtime itself (the same round trip on the memory ` +
      "store), the rest is the store calls. It would take the memory-path work of the target above plus folding the reads " +
      "into the write transactions (lease and head in one statement, the answer and the resumed step's first commit in one " +
      "transaction where the protocol allows), leaving about one transaction per checkpoint.",
  },
  {
    subject: "pause + resume, Postgres (loopback)",
    target: "≥ 5× faster than LangGraph.js",
    measure: rowRatio("peer", "pause-resume", "postgres", "pause + resume round trip", 5),
    cause: (run) =>
      `A round trip makes ${calls(run, "postgres")}: every call is one round trip to the server and every write one commit ` +
      `waiting for its WAL flush. It takes ${roundTrip(run, "postgres", "rein")}, of which ` +
      `${roundTrip(run, "memory", "rein")} is the runtime itself (the same round trip on the memory store). Being 5× ` +
      "faster than the peer would take one or two round trips per call: the lease, head and continuation reads as one " +
      "server-side function, and the answer folded into the resumed step's commit.",
  },
  {
    subject: "pause + resume, Postgres (loopback)",
    target: "≤ 1.5× the floor of one commit per checkpoint",
    measure: rowRatio("floor", "pause-resume", "postgres", "pause + resume round trip", 1.5),
    cause: (run) =>
      `A round trip makes ${calls(run, "postgres")}, each its own round trip, and takes ` +
      `${roundTrip(run, "postgres", "rein")}; the floor makes one round trip per checkpoint and takes ` +
      `${roundTrip(run, "postgres", "floor")}. It would take the folding of the target above: one statement per call.`,
  },
  {
    subject: "resume one random paused thread, Postgres",
    target: "≥ 1.5× faster than LangGraph.js",
    measure: rowRatio("peer", "paused-threads", "postgres", "resume one random paused thread", 1.5),
    cause: (run) =>
      "The thread was not touched by this process lately, so nothing is cached: the resume is three round trips one " +
      "after the other (the lease with the answer's reads, the answer with the continuation's reads, the commit with " +
      `the release), two of them commits. ${calls(run, "postgres")} make a pause + resume in all. The peer reads ` +
      "its checkpoint and writes one, with no lease, no fence and no indexed interrupt row to update.",
  },
  {
    subject: "server CPU per HTTP resume, Postgres",
    target: "≤ 1.5× SQLite's (the server and its Postgres backends)",
    measure: storeRatio("totalMs", 1.5, "atMost"),
    cause: (run) => SERVER_CAUSE + serverCosts(run),
  },
  {
    subject: "resumes per second of one server, Postgres",
    target: "≥ 0.8× one SQLite server's",
    measure: storeRatio("perSecond", 0.8, "atLeast"),
    cause: (run) => SERVER_CAUSE + serverCosts(run),
  },
  {
    subject: "answer K parallel interrupts one by one (memory)",
    target: "per answer at K = 1,000 within 1.5× of K = 10",
    measure: (run) => {
      const small = perAnswer(run, 10);
      const large = perAnswer(run, 1000);
      if (small === null || large === null || small === 0) return undefined;
      return { value: `${times(large / small)} the K = 10 cost`, met: large / small <= 1.5 };
    },
    cause: (run) => {
      const fact = (what: string, k: number): number | undefined =>
        run.fact(`decoded ${what} per answer, K=${k}`);
      return (
        `Per answer the store decodes ${count(fact("records", 10))} records (${kb(fact("bytes", 10))}) at K = 10 and ` +
        `${count(fact("records", 1000))} records (${kb(fact("bytes", 1000))}) at K = 1,000 (counted by a wrapping serializer): ` +
        "the paused step's head, with its K task specs, is decoded once and then handed back by the store while it " +
        "stays the head, and the run result's page of pending interrupts is decoded only when read. What still grows " +
        "with K is work without decoding: the continuation lists the kinds of the step's K−1 task results (rows without " +
        "their bodies) and walks the head's K task specs to find the tasks without a result. The answer itself reads and " +
        "writes only its interrupt and its task. It would take storing the step's tasks as rows with their state, so a " +
        "continuation reads the tasks that will run and counts the rest."
      );
    },
  },
  ...(["sqlite", "postgres"] as const).map((store): Target => ({
    subject: `200 steps × 1 KB appended, ${store}`,
    target: "total logical bytes ≤ 2× the payload",
    measure: (run) => {
      const row = run.row("storage-growth", store, "total logical bytes");
      const total = row ? headline(row.rein) : null;
      const payload = run.fact("payload bytes");
      if (total === null || !payload) return undefined;
      return { value: `${times(total / payload)} the payload`, met: total / payload <= 2 };
    },
    cause: () =>
      "Each step stores a delta of the appended message plus its checkpoint row, and a snapshot whenever the appended bytes " +
      "since the last one exceed three times its size; the bound is the snapshot factor.",
  })),
  ...(["sqlite", "postgres"] as const).map((store): Target => ({
    subject: `paused thread, ${store}`,
    target: "≤ 1 KB + payload (logical bytes)",
    measure: (run) => {
      const m = pausedThread(run, store);
      if (!m) return undefined;
      const over = m.bytes - m.payload;
      return {
        value: `${Math.round(m.bytes)} bytes per thread, payload ${Math.round(m.payload)}`,
        met: over <= 1024,
      };
    },
    cause: () =>
      "A paused thread keeps a thread row, a run row, two checkpoints (the input and the paused step), the paused task's " +
      "result, an indexed interrupt row, the head and the lease; the interrupt and run records leave out every field a " +
      "column or a default already gives. Below this it would take folding the input checkpoint into the first step's.",
  })),
];

/** A {@link RunView} over the reports of one run. */
export function viewOf(reports: readonly ReportLike[]): RunView {
  const rows = reports.flatMap((r) => r.rows);
  const facts: Record<string, number> = {};
  for (const report of reports) Object.assign(facts, report.facts);
  return {
    row: (scenario, variant, metric) =>
      rows.find(
        (r) => r.scenario === scenario && r.variant === variant && r.metric.startsWith(metric),
      ),
    fact: (name) => facts[name],
  };
}

/** Every target checked against `run`. */
export function checkTargets(run: RunView): TargetResult[] {
  return TARGETS.map((t) => {
    const m = t.measure(run);
    if (!m) return { subject: t.subject, target: t.target, measured: "not measured", met: null };
    return {
      subject: t.subject,
      target: t.target,
      measured: m.value,
      met: m.met,
      ...(m.met ? {} : { cause: t.cause(run) }),
    };
  });
}

/** The targets section of RESULTS.md. */
export function targetsSection(reports: readonly ReportLike[]): string[] {
  const results = checkTargets(viewOf(reports));
  const mark = (met: boolean | null): string => (met === null ? "—" : met ? "met" : "**not met**");
  const unmet = results.filter((r) => r.met === false);
  return [
    "## Targets",
    "",
    "What the storage work set out to reach, checked against this run. For each target not met, the measured cause and what it would take.",
    "",
    "| Subject | Target | This run | |",
    "| --- | --- | --- | --- |",
    ...results.map((r) => `| ${r.subject} | ${r.target} | ${r.measured} | ${mark(r.met)} |`),
    "",
    ...unmet.map((r) => `- **${r.subject}** (${r.target}): ${r.cause ?? ""}`),
    ...(unmet.length > 0 ? [""] : []),
  ];
}
