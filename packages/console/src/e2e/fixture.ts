/**
 * A real server for the browser: the support-desk demo (SPEC §9) on a SQLite file, two tenants'
 * tokens, the built console at `/`, on a free loopback port.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ReinClient } from "@rein/client";
import type { Checkpointer } from "@rein/core";
import { DeskFiles, createSupportDesk, type LedgerEntry } from "@rein/example-support-desk";
import { createServer, openAuth, tokenAuth, type ReinServer, type TokenConfig } from "@rein/server";
import { SqliteSaver } from "@rein/sqlite";
import { consoleDir, ensureConsoleBuilt } from "../build.ts";
import { governed } from "./governed.ts";
import { question } from "./question.ts";

/** The demo as the tests see it: graph name, sub-agent namespaces and graphs, the paused node. */
export const DEMO = {
  /** The orchestrator's graph name. */
  name: "support-desk",
  /** Namespaces of the two sub-agents that pause side by side. */
  refund: "refund",
  email: "email",
  /** Their graph names. */
  refundGraph: "refund_agent",
  emailGraph: "email_agent",
  /** The node of a sub-agent that asks for approval before running a tool. */
  node: "tools",
} as const;

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
  /** The server's store (SQL on `store.db` plays someone editing the database by hand). */
  store: SqliteSaver;
  /** A client acting as alice. */
  alice: ReinClient;
  /**
   * Creates a demo thread, runs it to the supervisor's dispatch question and accepts it, so the
   * refund and email sub-agents both wait for approval.
   */
  pausedThread(threadId: string): Promise<void>;
  /** The refunds the demo's payment API executed for one thread. */
  ledger(threadId: string): LedgerEntry[];
  /** Creates a thread of the plain-question graph, paused on its question. */
  questionThread(threadId: string): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link startConsoleFixture}. */
export interface FixtureOptions {
  /** `open`: no tokens (local use); default: the two tenants' tokens. */
  auth?: "open" | "tokens";
  /** Writes rows into the store before the server starts. */
  seed?: (store: Checkpointer) => Promise<void>;
  /** The tokens of a token server (default: {@link TOKENS}); alice's token must be among them. */
  tokens?: TokenConfig[];
}

/** Builds the console if needed and starts the server. */
export async function startConsoleFixture(options: FixtureOptions = {}): Promise<ConsoleFixture> {
  await ensureConsoleBuilt();
  const dir = mkdtempSync(join(tmpdir(), "rein-console-e2e-"));
  const store = SqliteSaver.open(join(dir, "rein.db"));
  await options.seed?.(store);
  const dataDir = join(dir, "desk");
  const files = new DeskFiles(dataDir);
  const server = await createServer({
    store,
    storeKind: "sqlite",
    graphs: {
      [DEMO.name]: (s: Checkpointer) => createSupportDesk({ store: s, dataDir }),
      question,
      governed,
    },
    auth: options.auth === "open" ? openAuth() : tokenAuth(options.tokens ?? Object.values(TOKENS)),
    consoleDir,
    pingMs: 1000,
    queuePollMs: 250,
    drainMs: 2000,
  });
  const url = await server.listen({ port: 0, host: "127.0.0.1" });
  const alice = new ReinClient({
    baseUrl: url,
    ...(options.auth === "open" ? {} : { token: TOKENS.alice.token }),
  });
  return {
    url,
    server,
    store,
    alice,
    async pausedThread(threadId) {
      await alice.createThread({ graph: DEMO.name, threadId });
      const asked = await alice.startRun(threadId, { input: {}, wait: true });
      if (asked.status !== "interrupted")
        throw new Error(`demo thread ${threadId} did not ask to dispatch: ${asked.status}`);
      await alice.resume(threadId, { resume: { type: "accept" } });
      const pending = await alice.listInterrupts({ threadId });
      if (pending.items.length !== 2)
        throw new Error(`demo thread ${threadId} has ${pending.items.length} pending, not 2`);
    },
    ledger: (threadId) => files.ledger(threadId),
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
