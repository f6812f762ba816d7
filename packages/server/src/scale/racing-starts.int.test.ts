/**
 * Racing starts on one idle thread, against real `rein serve` processes: on Postgres with one
 * process and with two (the racers alternate between them), and on SQLite with one. Thirty
 * threads, each raced by three starts of one kind at once — background (202), `wait: true` and
 * streamed — give exactly one accepted start per thread; every other start is 409
 * `thread_busy` (never `fenced_out`, which would claim another process took the run over) and
 * changes nothing: the thread has one run, and its side effect (a ledger line) happened once.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { probePostgres } from "@rein/postgres/testing";
import { TOKENS } from "../testing/harness.ts";
import { Deployment, ledgerLines, until } from "../testing/deployment.ts";
import { launchRein, TEST_GRAPHS, type Proc } from "../testing/processes.ts";

const THREADS = 30;
const RACERS = 3;
/** Long enough that every racer arrives while the winner's run still holds the thread. */
const STEP_MS = 1_500;
const KINDS = ["background", "wait", "stream"] as const;
type Kind = (typeof KINDS)[number];
const token = TOKENS["alice"]!.token;
const postgres = await probePostgres();

/** One start's answer: its status and error code (`ok` for an accepted start). */
async function start(base: string, threadId: string, kind: Kind): Promise<string> {
  const response = await fetch(
    `${base}/threads/${threadId}/runs${kind === "stream" ? "/stream" : ""}`,
    {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        input: { tag: threadId, ms: STEP_MS },
        ...(kind === "wait" ? { wait: true } : {}),
      }),
    },
  );
  const text = await response.text();
  if (response.status < 300) return `${response.status} ok`;
  const body = JSON.parse(text) as { error: string };
  return `${response.status} ${body.error}`;
}

/**
 * Races the starts on fresh threads through `servers` (racer i goes to server i mod n), waits
 * for every accepted run to finish, and checks the outcome of each thread.
 */
async function race(servers: string[], ledger: string, prefix: string): Promise<void> {
  const call = async (method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(`${servers[0]}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const threads = Array.from({ length: THREADS }, (_, i) => `${prefix}-${i}`);
  for (const threadId of threads)
    expect((await call("POST", "/threads", { graph: "ledger", threadId })).status).toBe(201);
  const outcomes = await Promise.all(
    threads.map((threadId, t) =>
      Promise.all(
        Array.from({ length: RACERS }, (_, r) =>
          start(servers[r % servers.length]!, threadId, KINDS[t % KINDS.length]!),
        ),
      ),
    ),
  );
  const tally: Record<string, number> = {};
  for (const answers of outcomes)
    for (const answer of answers) tally[answer] = (tally[answer] ?? 0) + 1;
  console.info(
    `racing starts (${prefix}, ${servers.length} process(es)): ${JSON.stringify(tally)}`,
  );
  // Every accepted run finishes; then each thread has exactly one run and one charge.
  const runsOf = async (threadId: string): Promise<{ status: string }[]> =>
    (
      (await (await call("GET", `/threads/${threadId}/runs`)).json()) as {
        items: { status: string }[];
      }
    ).items;
  const runs = await until(
    () => Promise.all(threads.map(runsOf)),
    (all) => all.every((items) => items.length > 0 && items.every((r) => r.status === "done")),
    60_000,
  );
  const charges = ledgerLines(ledger);
  threads.forEach((threadId, t) => {
    const answers = outcomes[t]!;
    const kind = KINDS[t % KINDS.length]!;
    expect(
      answers.filter((a) => a.endsWith(" ok")),
      `${threadId} (${kind}): ${answers.join(", ")}`,
    ).toHaveLength(1);
    expect(
      answers.filter((a) => !a.endsWith(" ok")),
      `${threadId} (${kind}): ${answers.join(", ")}`,
    ).toEqual(Array.from({ length: RACERS - 1 }, () => "409 thread_busy"));
    expect(runs[t], threadId).toHaveLength(1);
    expect(
      charges.filter((c) => c["tag"] === threadId),
      threadId,
    ).toHaveLength(1);
  });
}

describe.skipIf(!postgres.available)(
  "racing starts on Postgres: one accepted, the others thread_busy",
  { timeout: 180_000 },
  () => {
    const deploy = new Deployment(postgres.url, 10_000);
    afterAll(() => deploy.destroy(postgres.url));

    it("one process: thirty threads, three racing starts each", async () => {
      const server = await deploy.serve(THREADS);
      await race([server.url!], deploy.ledger, "one");
    });

    it("two processes: the racers of a thread split between them", async () => {
      const second = await deploy.serve(THREADS);
      await race([deploy.procs[0]!.url!, second.url!], deploy.ledger, "two");
    });
  },
);

describe(
  "racing starts on SQLite: one accepted, the others thread_busy",
  { timeout: 180_000 },
  () => {
    const dir = mkdtempSync(join(tmpdir(), "rein-race-"));
    let server: Proc | undefined;
    afterAll(() => {
      server?.child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    });

    it("one process: thirty threads, three racing starts each", async () => {
      writeFileSync(join(dir, "tokens.json"), JSON.stringify(Object.values(TOKENS)));
      const ledger = join(dir, "ledger.jsonl");
      server = await launchRein(
        [
          "serve",
          ...[
            "--db",
            join(dir, "rein.db"),
            "--graphs",
            TEST_GRAPHS,
            "--concurrency",
            String(THREADS),
          ],
          ...["--tokens", join(dir, "tokens.json"), "--port", "0", "--log-level", "silent"],
        ],
        /listening on (\S+)/,
        { REIN_TEST_LEDGER: ledger },
      );
      await race([server.url!], ledger, "sqlite");
    });
  },
);
