/**
 * Metrics of the `rein` processes, spawned as a user runs them: `rein serve --metrics-token`
 * takes that token at `/metrics`, and `rein worker --metrics-port` serves its own metrics — the
 * pending approvals of the store, and the deadlines its timer resolved.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresSaver } from "@rein/postgres";
import { probePostgres, testSchemaName } from "@rein/postgres/testing";
import { TOKENS, client } from "../testing/harness.ts";
import { ask } from "../testing/graphs.ts";
import { REIN_BIN, TEST_GRAPHS, launchRein, type Proc } from "../testing/processes.ts";

const METRICS_TOKEN = "metrics-token-0123456789";
const probe = await probePostgres();

/** The value of the one sample `name{labels}` in the Prometheus text, or undefined. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}

async function scrape(url: string, token: string | null): Promise<Response> {
  return fetch(`${url}/metrics`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
}

describe("rein serve --metrics-token", { timeout: 60_000 }, () => {
  let dir: string;
  let proc: Proc;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rein-metrics-cli-"));
    writeFileSync(join(dir, "tokens.json"), JSON.stringify(Object.values(TOKENS)));
    proc = await launchRein(
      [
        "serve",
        "--db",
        join(dir, "rein.db"),
        "--graphs",
        TEST_GRAPHS,
        "--tokens",
        join(dir, "tokens.json"),
        "--port",
        "0",
        "--log-level",
        "silent",
        "--metrics-token",
        METRICS_TOKEN,
      ],
      /listening on (\S+)/,
    );
  });
  afterAll(() => {
    proc.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("takes the metrics token at /metrics and counts what the process did", async () => {
    const alice = client(proc.url!, TOKENS["alice"]!.token);
    await alice("POST", "/threads", { graph: "ask", threadId: "s-1" });
    await alice("POST", "/threads/s-1/runs", { input: {}, wait: true });
    const refused = await scrape(proc.url!, null);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toBe("unauthorized");
    const scraped = await scrape(proc.url!, METRICS_TOKEN);
    expect(scraped.status).toBe(200);
    const text = await scraped.text();
    expect(sample(text, "rein_approvals_pending", 'tenant="acme",graph="ask"')).toBe(1);
    expect(sample(text, "rein_runs_finished_total", 'kind="run",status="interrupted"')).toBe(1);
    // No process metrics unless asked for.
    expect(text).not.toContain("process_cpu");
  });
});

describe.skipIf(!probe.available)("rein worker --metrics-port", { timeout: 60_000 }, () => {
  const schema = testSchemaName();
  let store: PostgresSaver;
  let worker: Proc;
  let url: string;

  beforeAll(async () => {
    store = await PostgresSaver.connect({ connectionString: probe.url, schema });
    worker = await launchRein(
      [
        "worker",
        "--postgres",
        probe.url,
        "--schema",
        schema,
        "--graphs",
        TEST_GRAPHS,
        "--concurrency",
        "1",
        "--metrics-port",
        "0",
        "--metrics-token",
        METRICS_TOKEN,
      ],
      /worker ready/,
    );
    url = /metrics at (\S+)\/metrics/.exec(worker.log())![1]!;
  });
  afterAll(async () => {
    worker.child.kill("SIGKILL");
    await store.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await store.pool.query(`DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`);
    await store.close();
  });

  it("serves the store's pending approvals and the deadlines its timer resolved", async () => {
    const refused = await scrape(url, null);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toBe("unauthorized");
    expect((await fetch(`${url}/other`)).status).toBe(404);
    const paused = await ask(store).invoke({ timeoutMs: 1500 }, { threadId: "w-1" });
    expect(paused.status).toBe("interrupted");
    const first = await (await scrape(url, METRICS_TOKEN)).text();
    expect(sample(first, "rein_approvals_pending", 'tenant="",graph="ask"')).toBe(1);
    await expect
      .poll(
        async () =>
          sample(
            await (await scrape(url, METRICS_TOKEN)).text(),
            "rein_approval_answers_total",
            'graph="ask",decision="timeout",actor_type="timer"',
          ),
        { timeout: 15_000, interval: 250 },
      )
      .toBe(1);
  });

  it("refuses a non-loopback metrics host without a token (usage error)", async () => {
    const outcome = await new Promise<{ code: number; stderr: string }>((done) =>
      execFile(
        process.execPath,
        [
          REIN_BIN,
          "worker",
          "--postgres",
          probe.url,
          "--graphs",
          TEST_GRAPHS,
          "--metrics-port",
          "0",
          "--metrics-host",
          "0.0.0.0",
        ],
        { env: { ...process.env, REIN_METRICS_TOKEN: "" }, timeout: 30_000 },
        (error, _stdout, stderr) =>
          done({ code: typeof error?.code === "number" ? error.code : 0, stderr }),
      ),
    );
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain("--metrics-token");
  });
});
