/**
 * A real server for the browser: the demo graph on a SQLite file, two tenants' tokens, the built
 * console at `/`, on a free loopback port.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ReinClient } from "@rein/client";
import { createServer, tokenAuth, type ReinServer, type TokenConfig } from "@rein/server";
import { SqliteSaver } from "@rein/sqlite";
import { consoleDir, ensureConsoleBuilt } from "../build.ts";
import { DEMO, question } from "./demo.ts";

/** A reviewer of tenant `acme` and an admin of tenant `globex`. */
export const TOKENS = {
  alice: {
    token: "alice-console-token-0001",
    subject: "alice@acme",
    tenant: "acme",
    scopes: ["read", "run", "resume"],
  },
  bob: {
    token: "bob-console-token-000002",
    subject: "bob@globex",
    tenant: "globex",
    scopes: ["admin"],
  },
} satisfies Record<string, TokenConfig>;

/** The running server and a client for setting the scene. */
export interface ConsoleFixture {
  url: string;
  server: ReinServer;
  /** A client acting as alice. */
  alice: ReinClient;
  /** Creates a demo thread and runs it until its sub-agents pause. */
  pausedThread(threadId: string): Promise<void>;
  /** Creates a thread of the plain-question graph, paused on its question. */
  questionThread(threadId: string): Promise<void>;
  close(): Promise<void>;
}

/** Builds the console if needed and starts the server. */
export async function startConsoleFixture(): Promise<ConsoleFixture> {
  await ensureConsoleBuilt();
  const dir = mkdtempSync(join(tmpdir(), "rein-console-e2e-"));
  const store = SqliteSaver.open(join(dir, "rein.db"));
  const server = await createServer({
    store,
    storeKind: "sqlite",
    graphs: { ...DEMO.graphs, question },
    auth: tokenAuth(Object.values(TOKENS)),
    consoleDir,
    pingMs: 1000,
    queuePollMs: 250,
    drainMs: 2000,
  });
  const url = await server.listen({ port: 0, host: "127.0.0.1" });
  const alice = new ReinClient({ baseUrl: url, token: TOKENS.alice.token });
  return {
    url,
    server,
    alice,
    async pausedThread(threadId) {
      await alice.createThread({ graph: DEMO.name, threadId });
      const result = await alice.startRun(threadId, { input: DEMO.input, wait: true });
      if (result.status !== "interrupted")
        throw new Error(`demo thread ${threadId} did not pause: ${result.status}`);
    },
    async questionThread(threadId) {
      await alice.createThread({ graph: "question", threadId });
      await alice.startRun(threadId, { input: {}, wait: true });
    },
    async close() {
      await server.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
