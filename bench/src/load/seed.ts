/**
 * Seeding a server's store with paused threads: one thread of the test graph `ask` is paused
 * through the API (the template), then its rows are copied inside the database
 * (`clone.ts`) while no server runs.
 */
import pg from "pg";
import { openSqlite } from "../harness/sqlite.ts";
import { cloneThreadPostgres, cloneThreadSqlite, type CloneReport } from "./clone.ts";
import { startServer, type ServerStore } from "./server.ts";

/** The paused thread whose rows are copied. Distinctive: its id is replaced inside records. */
export const TEMPLATE = "load-tmpl";

/** POSTs JSON and reads the JSON answer. */
export async function post(
  url: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Pauses the template thread through the API of a server started for that alone. */
export async function seedTemplate(store: ServerStore): Promise<void> {
  const server = await startServer(store);
  try {
    const created = await post(`${server.url}/threads`, { graph: "ask", threadId: TEMPLATE });
    if (created.status !== 201) throw new Error(`POST /threads: ${created.status}`);
    const run = await post(`${server.url}/threads/${TEMPLATE}/runs`, { input: {}, wait: true });
    if (run.body["status"] !== "interrupted")
      throw new Error(`the template run did not pause: ${JSON.stringify(run.body)}`);
  } finally {
    await server.stop();
  }
}

/** Copies the template's rows `copies` times inside the store. */
export async function cloneTemplate(store: ServerStore, copies: number): Promise<CloneReport> {
  if (store.kind === "sqlite") {
    const db = openSqlite(store.path, { mustExist: true });
    try {
      return cloneThreadSqlite(db, TEMPLATE, copies);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  try {
    return await cloneThreadPostgres(client, store.schema, TEMPLATE, copies);
  } finally {
    await client.end();
  }
}
