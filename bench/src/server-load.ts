/**
 * A bounded load test of `rein serve` on loopback: answers per second and their latency
 * (autocannon), the latency of a page of the approval queue, and 200 concurrent SSE clients of
 * the live queue. The server runs in its own process (`rein serve --open`), so the load generator
 * does not share its event loop.
 *
 *   npm run bench:server -- [--threads 2000] [--postgres]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import pg from "pg";

const root = resolve(import.meta.dirname, "../..");
const { values } = parseArgs({
  options: {
    threads: { type: "string", default: "2000" },
    postgres: { type: "boolean", default: false },
    sse: { type: "string", default: "200" },
  },
});
const threads = Number(values.threads);
const sseClients = Number(values.sse);

const postgresUrl =
  process.env["REIN_BENCH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `rein_bench_${Date.now().toString(36)}`;

function startServer(dir: string): Promise<{ child: ChildProcess; url: string }> {
  const store = values.postgres
    ? ["--postgres", postgresUrl, "--schema", schema]
    : ["--db", join(dir, "rein.db")];
  const child = spawn(
    process.execPath,
    [
      join(root, "packages/server/bin/rein.mjs"),
      "serve",
      "--open",
      "--port",
      "0",
      "--log-level",
      "silent",
      "--graphs",
      join(root, "packages/server/src/testing/graphs.ts"),
      ...store,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((done, fail) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const match = /listening on (\S+)/.exec(out);
      if (match?.[1]) done({ child, url: match[1] });
    });
    child.on("exit", (code) => fail(new Error(`rein serve exited ${code}`)));
  });
}

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return (await response.json()) as Record<string, unknown>;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "rein-load-"));
  const { child, url } = await startServer(dir);
  try {
    // Seed: paused threads of the `ask` graph, one pending interrupt each.
    const ids = Array.from({ length: threads }, (_, i) => `load-${i}`);
    const seedStart = performance.now();
    for (let i = 0; i < ids.length; i += 20)
      await Promise.all(
        ids.slice(i, i + 20).map(async (id) => {
          await post(`${url}/threads`, { graph: "ask", threadId: id });
          await post(`${url}/threads/${id}/runs`, { input: {}, wait: true });
        }),
      );
    console.log(
      `seeded ${threads} paused threads in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
    );

    // Queue page latency with every thread pending.
    const pageTimes: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      await fetch(`${url}/interrupts?status=pending&limit=50`).then((r) => r.json());
      pageTimes.push(performance.now() - t);
    }
    pageTimes.sort((a, b) => a - b);
    console.log(
      `queue page of 50 among ${threads} pending: p50 ${percentile(pageTimes, 50).toFixed(2)} ms, p99 ${percentile(pageTimes, 99).toFixed(2)} ms`,
    );

    // 200 SSE clients of the live queue: time until all have their first page, and until all
    // see an answer made through the API.
    const controllers: AbortController[] = [];
    const firstPage: Promise<number>[] = [];
    const secondPage: Promise<number>[] = [];
    const sseStart = performance.now();
    let answeredAt = 0;
    for (let i = 0; i < sseClients; i++) {
      const controller = new AbortController();
      controllers.push(controller);
      let resolveFirst: (t: number) => void = () => undefined;
      let resolveSecond: (t: number) => void = () => undefined;
      firstPage.push(new Promise((r) => (resolveFirst = r)));
      secondPage.push(new Promise((r) => (resolveSecond = r)));
      void fetch(`${url}/interrupts/stream?limit=50`, { signal: controller.signal })
        .then(async (response) => {
          const reader = (response.body as ReadableStream<Uint8Array>).getReader();
          const decoder = new TextDecoder();
          let text = "";
          let pages = 0;
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return;
            text += decoder.decode(value, { stream: true });
            const count = text.split("event: interrupts").length - 1;
            while (pages < count) {
              pages += 1;
              if (pages === 1) resolveFirst(performance.now() - sseStart);
              if (pages === 2) resolveSecond(performance.now() - answeredAt);
            }
          }
        })
        .catch(() => undefined);
    }
    const firsts = (await Promise.all(firstPage)).sort((a, b) => a - b);
    console.log(
      `${sseClients} SSE clients: all had their first page after ${firsts.at(-1)?.toFixed(0)} ms`,
    );
    answeredAt = performance.now();
    const last = ids.pop() as string;
    await post(`${url}/threads/${last}/resume`, { resume: { text: "ok" } });
    const seconds = (await Promise.all(secondPage)).sort((a, b) => a - b);
    console.log(
      `an answer reached all ${sseClients} SSE clients: p50 ${percentile(seconds, 50).toFixed(0)} ms, max ${seconds.at(-1)?.toFixed(0)} ms`,
    );
    for (const c of controllers) c.abort();

    // Answers: each request resumes another paused thread.
    let next = 0;
    const result = await autocannon({
      url,
      connections: 10,
      amount: ids.length,
      requests: [
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          setupRequest: (request) => ({
            ...request,
            path: `/threads/${ids[next++ % ids.length] as string}/resume`,
            body: JSON.stringify({ resume: { text: "ok" } }),
          }),
        },
      ],
    });
    console.log(
      `resumes: ${result.requests.average.toFixed(0)}/s average over ${result.requests.total} answers, latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}`,
    );
  } finally {
    child.kill("SIGTERM");
    await new Promise((done) => child.once("exit", done));
    rmSync(dir, { recursive: true, force: true });
    if (values.postgres) {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(
        `DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`,
      );
      await client.end();
    }
  }
}

await main();
