/**
 * A real server for the browser: the support-desk demo (SPEC §9) on a SQLite file (or a fresh
 * schema of the test Postgres server), two tenants' tokens, the built console at `/`, on a free
 * loopback port.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ReinClient } from "@rein/client";
import type { Checkpointer } from "@rein/core";
import { createTestSaver, destroyTestSaver } from "@rein/postgres/testing";
import { DeskFiles, createSupportDesk, type LedgerEntry } from "@rein/example-support-desk";
import {
  createServer,
  openAuth,
  parseIdentity,
  tokenAuth,
  type ReinServer,
  type TokenConfig,
} from "@rein/server";
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
  /** The server's store. */
  store: Checkpointer;
  /**
   * The same store when it is SQLite (SQL on `sqlite.db` plays someone editing the database by
   * hand); null on Postgres.
   */
  sqlite: SqliteSaver | null;
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
  /** Where the server keeps its state: a SQLite file (default) or a fresh Postgres schema. */
  backend?: "sqlite" | "postgres";
  /** `open`: no tokens (local use); default: the two tenants' tokens. */
  auth?: "open" | "tokens";
  /** Writes rows into the store before the server starts. */
  seed?: (store: Checkpointer) => Promise<void>;
  /** The tokens of a token server (default: {@link TOKENS}); alice's token must be among them. */
  tokens?: TokenConfig[];
  /**
   * An OpenID issuer beside the tokens: its access tokens are accepted (tenant and groups from
   * the `tenant` and `groups` claims) and `GET /auth/config` offers it to the console.
   */
  oidc?: {
    issuer: string;
    audience: string;
    clientId: string;
    leewaySeconds?: number | undefined;
    jwksCooldownSeconds?: number | undefined;
  };
}

/** The server's store on `backend`, and how to close (and on Postgres drop) it. */
async function openStore(
  dir: string,
  backend: "sqlite" | "postgres",
): Promise<{ store: Checkpointer; sqlite: SqliteSaver | null; closeStore: () => Promise<void> }> {
  if (backend === "postgres") {
    const store = await createTestSaver();
    return { store, sqlite: null, closeStore: () => destroyTestSaver(store) };
  }
  const store = SqliteSaver.open(join(dir, "rein.db"));
  return { store, sqlite: store, closeStore: () => store.close() };
}

/** Builds the console if needed and starts the server. */
export async function startConsoleFixture(options: FixtureOptions = {}): Promise<ConsoleFixture> {
  await ensureConsoleBuilt();
  const dir = mkdtempSync(join(tmpdir(), "rein-console-e2e-"));
  const { store, sqlite, closeStore } = await openStore(dir, options.backend ?? "sqlite");
  await options.seed?.(store);
  const dataDir = join(dir, "desk");
  const files = new DeskFiles(dataDir);
  const server = await createServer({
    store,
    storeKind: sqlite ? "sqlite" : "postgres",
    graphs: {
      [DEMO.name]: (s: Checkpointer) => createSupportDesk({ store: s, dataDir }),
      question,
      governed,
    },
    auth:
      options.auth === "open"
        ? openAuth()
        : tokenAuth(
            options.tokens ?? Object.values(TOKENS),
            options.oidc
              ? parseIdentity(
                  JSON.stringify({
                    issuers: [
                      {
                        ...options.oidc,
                        consoleScopes: ["read", "run", "resume"],
                        claims: { tenant: "tenant", groups: "groups" },
                      },
                    ],
                  }),
                  "console fixture",
                )
              : [],
          ),
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
    sqlite,
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
      await closeStore();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
