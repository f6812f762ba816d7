/**
 * The load test's measurements over HTTP: queue page latency, SSE fan-out of the live queue, and
 * resumes per second (autocannon, one instance per server process, all at once).
 */
import autocannon from "autocannon";
import { nowMs } from "../harness/stats.ts";

/** `count` sequential GETs of `path`, spread round-robin over the servers; latencies in ms. */
export async function pageLatencies(
  urls: readonly string[],
  path: string,
  count: number,
  check: (body: { items: { id: string }[]; nextCursor: string | null }) => void,
): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const url = urls[i % urls.length] as string;
    const t = nowMs();
    const response = await fetch(`${url}${path}`);
    const body = (await response.json()) as { items: { id: string }[]; nextCursor: string | null };
    samples.push(nowMs() - t);
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}`);
    if (i === 0) check(body);
  }
  return samples;
}

const EVENT = "event: interrupts";

/** What the SSE clients saw: when each had its first page, and when each saw the answer. */
export interface SseFanout {
  /** ms from opening all streams to each client's first `interrupts` event. */
  firstPage: number[];
  /** ms from sending the answer to each client's next `interrupts` event. */
  answer: number[];
}

/**
 * Opens `clients` SSE streams of `GET /interrupts/stream?limit=50` (round-robin over the
 * servers), waits for every first page, then calls `answer` and waits until every client got a
 * changed page.
 */
export async function sseFanout(
  urls: readonly string[],
  clients: number,
  answer: () => Promise<void>,
  timeoutMs = 60_000,
): Promise<SseFanout> {
  const controllers: AbortController[] = [];
  const first: Promise<number>[] = [];
  const second: Promise<number>[] = [];
  const start = nowMs();
  let answeredAt = 0;
  for (let i = 0; i < clients; i++) {
    const controller = new AbortController();
    controllers.push(controller);
    let onFirst: (t: number) => void = () => undefined;
    let onSecond: (t: number) => void = () => undefined;
    let onError: (e: unknown) => void = () => undefined;
    const failed = new Promise<never>((_, fail) => (onError = fail));
    failed.catch(() => undefined);
    first.push(Promise.race([new Promise<number>((r) => (onFirst = r)), failed]));
    second.push(Promise.race([new Promise<number>((r) => (onSecond = r)), failed]));
    const url = urls[i % urls.length] as string;
    void fetch(`${url}/interrupts/stream?limit=50`, { signal: controller.signal })
      .then(async (response) => {
        if (response.status !== 200) throw new Error(`SSE: ${response.status}`);
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        let text = "";
        let pages = 0;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) throw new Error("SSE stream ended");
          text += decoder.decode(value, { stream: true });
          // Count each event name once: consume the text up to the last one found, keep a tail
          // short enough to hold only the start of the next name.
          for (;;) {
            const at = text.indexOf(EVENT);
            if (at < 0) break;
            text = text.slice(at + EVENT.length);
            pages += 1;
            if (pages === 1) onFirst(nowMs() - start);
            if (pages === 2) onSecond(nowMs() - answeredAt);
          }
          if (text.length > EVENT.length) text = text.slice(-EVENT.length);
        }
      })
      .catch((error: unknown) => {
        if (!controller.signal.aborted) onError(error);
      });
  }
  const timeout = <T>(p: Promise<T>, what: string): Promise<T> =>
    Promise.race([
      p,
      new Promise<never>((_, fail) =>
        setTimeout(() => fail(new Error(`SSE: ${what} timed out`)), timeoutMs).unref(),
      ),
    ]);
  try {
    const firstPage = await timeout(Promise.all(first), "first pages");
    answeredAt = nowMs();
    await answer();
    const answered = await timeout(Promise.all(second), "answer fan-out");
    return { firstPage, answer: answered };
  } finally {
    for (const c of controllers) c.abort();
  }
}

/** One autocannon instance's figures. */
export interface ResumeFigures {
  url: string;
  ok: number;
  non2xx: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
}

/**
 * Resumes every thread of `threads[i]` through `urls[i]`, one autocannon instance per server,
 * all at the same time, each thread once. Returns per-server figures and the wall time.
 */
export async function resumeLoad(
  urls: readonly string[],
  threads: readonly (readonly string[])[],
  connections: number,
): Promise<{ perServer: ResumeFigures[]; seconds: number }> {
  const start = nowMs();
  const perServer = await Promise.all(
    urls.map(async (url, s) => {
      const list = threads[s] ?? [];
      let next = 0;
      const result = await autocannon({
        url,
        connections,
        amount: list.length,
        timeout: 60,
        requests: [
          {
            method: "POST",
            headers: { "content-type": "application/json" },
            setupRequest: (request) => ({
              ...request,
              path: `/threads/${encodeURIComponent(list[next++ % list.length] as string)}/resume`,
              body: JSON.stringify({ resume: { text: "ok" } }),
            }),
          },
        ],
      });
      return {
        url,
        ok: result["2xx"],
        non2xx: result.non2xx,
        errors: result.errors,
        p50: result.latency.p50,
        p99: result.latency.p99,
        max: result.latency.max,
      };
    }),
  );
  return { perServer, seconds: (nowMs() - start) / 1000 };
}
