/**
 * `npm run bench:pg-profile [-- --ops N] [-- --port P] [-- --url URL]`: the database side of
 * Rein's hot paths on Postgres, in counts that do not depend on how busy the machine is. On a
 * throwaway cluster (`initdb` in a temporary folder, port 55436 unless `--port`; `--url` names a
 * server of your own with `pg_stat_statements` preloaded instead), it runs each phase N times
 * (200 by default) on a fresh pool and prints, per operation: transactions committed, WAL bytes,
 * records and full-page images, every statement (`pg_stat_statements`: calls, rows, mean time,
 * shared blocks, WAL bytes; statements inside server-side functions are marked "in fn"), and the
 * rows written per table with their HOT updates and the index entries they cost.
 *
 * Phases: the library's start→pause and resume (`prepare` then `ask`, the pause-resume graph)
 * and a 10-node chain (per superstep); LangGraph.js's start→pause and resume of the same graph on
 * its PostgresSaver (schema `langgraph` of the same database), the peer of the library's figures;
 * then `rein serve` on the same database: start→pause (create the thread, run it until it asks)
 * and resume over HTTP, as the server-load bench does.
 */
import { parseArgs } from "node:util";
import { Command as PeerCommand } from "@langchain/langgraph";
import { PostgresSaver as PeerPostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { PostgresSaver } from "@rein/postgres";
import { Command, END, lastValue, RunConfig, START, StateGraph } from "@rein/core";
import pg from "pg";
import { resumeLoad } from "./load/measure.ts";
import { post } from "./load/seed.ts";
import { startServer } from "./load/server.ts";
import { startCluster, type Cluster } from "./profile/cluster.ts";
import { indexEntries, measurePhase, type PhaseCost } from "./profile/stats.ts";
import { peerThread, peerInterrupts } from "./harness/peer.ts";
import { benchApprovalGraph, peerApprovalGraph } from "./scenarios/pause-resume.ts";

const { values } = parseArgs({
  options: {
    ops: { type: "string", default: "200" },
    port: { type: "string", default: "55436" },
    url: { type: "string" },
  },
});
const ops = Number(values.ops);
const schema = "rein";
const peerSchema = "langgraph";

const cluster: Cluster | undefined = values.url ? undefined : startCluster(Number(values.port));
const adminUrl = values.url ?? cluster?.url ?? "";
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
const database = `rein_profile_${process.pid}`;
const url = new URL(adminUrl);
url.pathname = `/${database}`;
const workload = url.toString();
try {
  await admin.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  await admin.query(`CREATE DATABASE ${database}`);
  await withSaver(() => Promise.resolve()); // migrations, outside every phase
  await withPeerSaver((saver) => saver.setup()); // LangGraph.js's tables, outside every phase
  const results: [string, number, PhaseCost][] = [];
  const phase = async (name: string, per: number, fn: () => Promise<void>, tables = schema) => {
    results.push([name, per, await measurePhase(admin, workload, tables, fn)]);
  };
  await phase("library: start → pause", ops, () =>
    withSaver(async (saver) => {
      const graph = benchApprovalGraph(saver);
      for (let i = 0; i < ops; i++) {
        const r = await graph.invoke({ n: 1 }, { threadId: `lib-${i}` });
        if (r.status !== "interrupted") throw new Error(`expected a pause, got ${r.status}`);
      }
    }),
  );
  await phase("library: resume", ops, () =>
    withSaver(async (saver) => {
      const graph = benchApprovalGraph(saver);
      for (let i = 0; i < ops; i++) {
        const r = await graph.resume(RunConfig.thread(`lib-${i}`), Command.resume("yes"));
        if (r.status !== "done") throw new Error(`expected done, got ${r.status}`);
      }
    }),
  );
  await phase("library: superstep (10-node chain, per step)", ops * 10, () =>
    withSaver(async (saver) => {
      const graph = chain(saver);
      for (let i = 0; i < ops; i++) {
        const r = await graph.invoke({ n: 0 }, { threadId: `chain-${i}` });
        if (r.status !== "done" || r.values.n !== 10) throw new Error("the chain did not finish");
      }
    }),
  );
  await phase(
    "LangGraph.js: start → pause",
    ops,
    () =>
      withPeerSaver(async (saver) => {
        const graph = peerApprovalGraph(saver);
        for (let i = 0; i < ops; i++) {
          const r = await graph.invoke({ n: 1 }, peerThread(`peer-${i}`));
          if (peerInterrupts(r).length !== 1) throw new Error("LangGraph.js did not pause");
        }
      }),
    peerSchema,
  );
  await phase(
    "LangGraph.js: resume",
    ops,
    () =>
      withPeerSaver(async (saver) => {
        const graph = peerApprovalGraph(saver);
        for (let i = 0; i < ops; i++) {
          const r = await graph.invoke(new PeerCommand({ resume: "yes" }), peerThread(`peer-${i}`));
          if (r.answer !== "yes") throw new Error("LangGraph.js did not finish the resume");
        }
      }),
    peerSchema,
  );
  const store = { kind: "postgres" as const, url: workload, schema };
  const server = await startServer(store);
  const ids = Array.from({ length: ops }, (_, i) => `srv-${i}`);
  try {
    // The server's connections stay open across its phases: each phase ends with a stop.
    await serverStart(server.url, "srv-warm");
  } finally {
    await server.stop();
  }
  await phase("server: start → pause (HTTP)", ops, async () => {
    const s = await startServer(store);
    try {
      for (const id of ids) await serverStart(s.url, id);
    } finally {
      await s.stop();
    }
  });
  await phase("server: resume (HTTP, 10 connections)", ops, async () => {
    const s = await startServer(store);
    try {
      const load = await resumeLoad([s.url], [ids], 10);
      const ok = load.perServer[0]?.ok ?? 0;
      if (ok !== ops) throw new Error(`${ok} of ${ops} resumes answered 2xx`);
    } finally {
      await s.stop();
    }
  });
  console.log(report(results));
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
  cluster?.stop();
}

/** Runs `fn` on a saver of its own pool, closed afterwards (its backends exit). */
async function withSaver(fn: (saver: PostgresSaver) => Promise<void>): Promise<void> {
  const saver = await PostgresSaver.connect({ connectionString: workload, schema });
  try {
    await fn(saver);
  } finally {
    await saver.close();
  }
}

/** Runs `fn` on LangGraph.js's PostgresSaver over a pool of its own, ended afterwards. */
async function withPeerSaver(fn: (saver: PeerPostgresSaver) => Promise<void>): Promise<void> {
  const saver = new PeerPostgresSaver(new pg.Pool({ connectionString: workload }), undefined, {
    schema: peerSchema,
  });
  try {
    await fn(saver);
  } finally {
    await saver.end();
  }
}

function chain(saver: PostgresSaver) {
  const names = Array.from({ length: 10 }, (_, i) => `n${i}`);
  let builder = new StateGraph({ n: lastValue<number>(() => 0) });
  for (const name of names) builder = builder.addNode(name, (s) => ({ n: s.n + 1 }));
  builder = builder.addEdge(START, "n0").addEdge("n9", END);
  for (let i = 1; i < 10; i++) builder = builder.addEdge(`n${i - 1}`, `n${i}`);
  return builder.compile({ checkpointer: saver });
}

async function serverStart(base: string, threadId: string): Promise<void> {
  const created = await post(`${base}/threads`, { graph: "ask", threadId });
  if (created.status !== 201) throw new Error(`POST /threads: ${created.status}`);
  const run = await post(`${base}/threads/${threadId}/runs`, { input: {}, wait: true });
  if (run.body["status"] !== "interrupted")
    throw new Error(`the run did not pause: ${JSON.stringify(run.body)}`);
}

function f(n: number): string {
  return n === 0
    ? "0"
    : Math.abs(n) >= 100
      ? Math.round(n).toLocaleString("en-US")
      : n.toPrecision(3);
}

/** A statement's text on one line, its schema left out, cut to `max` characters. */
function short(query: string, max = 110): string {
  const one = query
    .replace(/"rein"\.|"?langgraph"?\./g, "")
    .replace(/\s+/g, " ")
    .trim();
  return (one.length > max ? `${one.slice(0, max - 1)}…` : one).replace(/\|/g, "\\|");
}

function report(results: [string, number, PhaseCost][]): string {
  const out: string[] = [];
  for (const [name, per, cost] of results) {
    out.push(
      `### ${name} (${ops} operations${per === ops ? "" : `, ${per} steps`})`,
      "",
      `Per ${per === ops ? "operation" : "step"}: ${f(cost.commits / per)} transactions committed, ` +
        `${f(cost.walBytes / per)} WAL bytes in ${f(cost.walRecords / per)} records ` +
        `(${f(cost.walFpi / per)} full-page images), ` +
        `${f(cost.statements.filter((s) => s.toplevel).reduce((a, s) => a + s.calls, 0) / per)} statements sent, ` +
        `${f(cost.statements.filter((s) => s.toplevel).reduce((a, s) => a + s.totalMs, 0) / per)} ms inside the server ` +
        "(the statements sent, summed).",
      "",
      "| statement | where | calls | rows | mean ms | shared blocks | WAL bytes |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    );
    const statements = cost.statements
      .filter((s) => s.calls / per >= 0.05)
      .sort((a, b) => b.totalMs - a.totalMs);
    for (const s of statements)
      out.push(
        `| \`${short(s.query)}\` | ${s.toplevel ? "sent" : "in fn"} | ${f(s.calls / per)} | ` +
          `${f(s.rows / per)} | ${f(s.totalMs / s.calls)} | ${f(s.sharedBlocks / per)} | ` +
          `${f(s.walBytes / per)} |`,
      );
    out.push(
      "",
      "| table | indexes (partial) | inserted | updated | of them HOT | deleted | full-index entries written |",
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    );
    let entries = 0;
    for (const t of cost.tables) {
      entries += indexEntries(t);
      out.push(
        `| ${t.table} | ${t.indexes} (${t.partial}) | ${f(t.inserted / per)} | ${f(t.updated / per)} | ` +
          `${f(t.hot / per)} | ${f(t.deleted / per)} | ${f(indexEntries(t) / per)} |`,
      );
    }
    out.push(`| **all** | | | | | | **${f(entries / per)}** |`, "");
  }
  return out.join("\n");
}
