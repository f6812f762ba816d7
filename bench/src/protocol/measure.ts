/**
 * The protocol comparison's measurements on one server: throughput and latency of start→paused
 * and resume→done with concurrent SDK clients, the CPU each operation costs (server process and
 * Postgres backends), and executions of the asking nodes per answer with K threads pending.
 */
import { nowMs, quantile } from "../harness/stats.ts";
import {
  answerOne,
  resumeDone,
  sdkClient,
  startPaused,
  type GraphName,
  type Paused,
} from "./client.ts";
import { executionsOf } from "./executions.ts";
import type { ProtocolServer } from "./servers.ts";

/** One measured phase: `ops` operations by `clients` clients at once. */
export interface PhaseFigures {
  ops: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** CPU ms per operation of the server process. */
  serverCpuMs: number;
  /** CPU ms per operation of the server's Postgres backends (0 without Postgres). */
  backendCpuMs: number;
  /**
   * CPU ms per operation of the bench process (the SDK clients): on a small machine the
   * clients share the cores with the server, so this is what the server could not use.
   */
  clientCpuMs: number;
}

/** Node executions while answering every question of K paused threads one by one. */
export interface ExecutionFigures {
  threads: number;
  answers: number;
  /** Executions of the asking nodes during the answers (the pauses' own executions excluded). */
  executions: number;
  perAnswer: number;
}

/** Everything measured for one graph on one server. */
export interface GraphFigures {
  start: PhaseFigures;
  resume: PhaseFigures;
  executions: ExecutionFigures;
}

/** Runs `fn` on every item with `clients` workers at once; latencies in ms, wall time in s. */
export async function concurrently<T, R>(
  items: readonly T[],
  clients: number,
  fn: (item: T) => Promise<R>,
): Promise<{ results: R[]; latencies: number[]; seconds: number }> {
  const results: R[] = new Array<R>(items.length);
  const latencies: number[] = [];
  let next = 0;
  const started = nowMs();
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) {
      const t = nowMs();
      results[i] = await fn(items[i] as T);
      latencies.push(nowMs() - t);
    }
  };
  await Promise.all(Array.from({ length: Math.min(clients, items.length) }, worker));
  return { results, latencies, seconds: (nowMs() - started) / 1000 };
}

/** Runs one phase under a CPU meter. */
async function phase<T, R>(
  server: ProtocolServer,
  items: readonly T[],
  clients: number,
  fn: (item: T) => Promise<R>,
): Promise<{ figures: PhaseFigures; results: R[] }> {
  const meter = await server.meter();
  const client = process.cpuUsage();
  const { results, latencies, seconds } = await concurrently(items, clients, fn);
  const clientUse = process.cpuUsage(client);
  const cpu = await meter.stop();
  return {
    results,
    figures: {
      ops: items.length,
      perSecond: items.length / seconds,
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      serverCpuMs: cpu.server / items.length,
      backendCpuMs: cpu.backends / items.length,
      clientCpuMs: (clientUse.user + clientUse.system) / 1000 / items.length,
    },
  };
}

/**
 * Pauses `k` threads of `graph`, then answers each of their questions one at a time by
 * interrupt id (a map of one), and counts the asking nodes' executions during the answers.
 * A targeted answer should run only the node it answers: 1 execution per answer.
 */
export async function executionsPerAnswer(
  server: ProtocolServer,
  graph: GraphName,
  k: number,
  clients: number,
): Promise<ExecutionFigures> {
  const client = sdkClient(server.apiUrl);
  const { results: paused } = await concurrently(
    Array.from({ length: k }, (_, i) => i),
    clients,
    () => startPaused(client, graph),
  );
  const threads = new Set(paused.map((p) => p.threadId));
  const before = executionsOf(server.executions, threads);
  let answers = 0;
  await concurrently(paused, clients, async (p: Paused) => {
    let pending = p.pending;
    while (pending.length > 0) {
      const [first] = pending;
      const after = await answerOne(client, graph, p.threadId, (first as { id: string }).id);
      answers++;
      if (after.some((q) => q.id === first?.id))
        throw new Error(`${graph}: the answered question is still pending on ${p.threadId}`);
      pending = after;
    }
  });
  const executions = executionsOf(server.executions, threads) - before;
  return { threads: k, answers, executions, perAnswer: executions / answers };
}

/** Measures `graph` on `server`: warm-up, start→paused, resume→done, executions at K. */
export async function measureGraph(
  server: ProtocolServer,
  graph: GraphName,
  options: { ops: number; clients: number; k: number; warmup: number },
): Promise<GraphFigures> {
  const client = sdkClient(server.apiUrl);
  const warm = await concurrently(
    Array.from({ length: options.warmup }, (_, i) => i),
    options.clients,
    () => startPaused(client, graph),
  );
  await concurrently(warm.results, options.clients, (p) => resumeDone(client, graph, p));
  const start = await phase(
    server,
    Array.from({ length: options.ops }, (_, i) => i),
    options.clients,
    () => startPaused(client, graph),
  );
  const resume = await phase(server, start.results, options.clients, (p) =>
    resumeDone(client, graph, p),
  );
  const executions = await executionsPerAnswer(server, graph, options.k, options.clients);
  return { start: start.figures, resume: resume.figures, executions };
}
