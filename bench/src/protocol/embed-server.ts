/**
 * LangGraph's Postgres-backed server for the protocol comparison, in a process of its own:
 * `@langchain/langgraph-api`'s embed server (`createEmbedServer`, the routes of its Agent Server
 * a user mounts in their own app) with LangGraph's `PostgresSaver` as checkpointer and threads
 * kept in a Postgres table. Run as `tsx embed-server.ts <postgres-url> <port>`; it prints
 * `listening on <url>` once it serves.
 */
import { serve } from "@hono/node-server";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { createEmbedServer, type ThreadSaver } from "@langchain/langgraph-api/experimental/embed";
import pg from "pg";
import { fanout, refund } from "./graphs.langgraph.ts";

type Metadata = Record<string, unknown>;

/** Threads (id and metadata) in one Postgres table, the part the embed server leaves to its host. */
function postgresThreads(pool: pg.Pool): ThreadSaver {
  const row = (r: { thread_id: string; metadata: Metadata }) => ({
    thread_id: r.thread_id,
    metadata: r.metadata,
  });
  return {
    async get(id) {
      const { rows } = await pool.query<{ thread_id: string; metadata: Metadata }>(
        "SELECT thread_id, metadata FROM bench_threads WHERE thread_id = $1",
        [id],
      );
      // The embed routes answer 404 for a missing thread when `get` yields nothing.
      return rows[0]
        ? row(rows[0])
        : (undefined as unknown as { thread_id: string; metadata: Metadata });
    },
    async set(id, { kind, metadata }) {
      const { rows } = await pool.query<{ thread_id: string; metadata: Metadata }>(
        kind === "put"
          ? `INSERT INTO bench_threads (thread_id, metadata) VALUES ($1, $2)
             ON CONFLICT (thread_id) DO UPDATE SET metadata = $2, updated_at = now()
             RETURNING thread_id, metadata`
          : `INSERT INTO bench_threads (thread_id, metadata) VALUES ($1, $2)
             ON CONFLICT (thread_id) DO UPDATE
               SET metadata = bench_threads.metadata || $2, updated_at = now()
             RETURNING thread_id, metadata`,
        [id, JSON.stringify(metadata ?? {})],
      );
      return row(rows[0] as { thread_id: string; metadata: Metadata });
    },
    async delete(id) {
      await pool.query("DELETE FROM bench_threads WHERE thread_id = $1", [id]);
    },
  };
}

const [url, port] = process.argv.slice(2);
if (!url || !port) throw new Error("usage: embed-server.ts <postgres-url> <port>");
const pool = new pg.Pool({ connectionString: url, max: 10 });
await pool.query(`CREATE TABLE IF NOT EXISTS bench_threads (
  thread_id text PRIMARY KEY,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now())`);
// One pool for the threads and the checkpointer, as a host would share it.
const checkpointer = new PostgresSaver(pool);
await checkpointer.setup();
const app = createEmbedServer({
  graph: { refund, fanout },
  threads: postgresThreads(pool),
  checkpointer,
});
const server = serve({ fetch: app.fetch, port: Number(port), hostname: "127.0.0.1" }, (info) => {
  console.log(`listening on http://127.0.0.1:${info.port}`);
});
process.once("SIGTERM", () => {
  server.close();
  void pool.end().finally(() => process.exit(0));
});
