/**
 * Test helpers: stores on both backends (SQLite file, fresh Postgres schema), a server listening
 * on a free loopback port, a small fetch wrapper, and a snapshot of everything a store holds (to
 * prove a refused request changed nothing).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { Checkpointer } from "@rein/core";
import { PostgresSaver } from "@rein/postgres";
import { probePostgres, testSchemaName } from "@rein/postgres/testing";
import { SqliteSaver } from "@rein/sqlite";
import { createServer, type ReinServer, type ServerOptions } from "../app.ts";
import { tokenAuth, type TokenConfig } from "../auth.ts";
import { graphs } from "./graphs.ts";
import { rewindPostgres, rewindSqlite } from "./legacy.ts";

/** A store under test and how to throw it away. */
export interface TestStore {
  store: Checkpointer;
  destroy(): Promise<void>;
  /**
   * Closes the store as a version before side records would have left it (its server's side
   * records in once slots, the schema before the migration that copies them: see legacy.ts) and
   * opens it again, which upgrades it; this store is closed, the one returned is upgraded.
   * Persistent backends only.
   */
  upgradeFromLegacy?(): Promise<TestStore & { rewound: number }>;
}

/** A backend the suites run on. */
export interface Backend {
  name: "sqlite" | "postgres";
  /** False when its server is unreachable (the suite is skipped with the printed reason). */
  available: boolean;
  create(): Promise<TestStore>;
}

/** A SQLite file in a fresh temp dir. */
export const sqliteBackend: Backend = {
  name: "sqlite",
  available: true,
  create: () => {
    const dir = mkdtempSync(join(tmpdir(), "rein-server-"));
    const path = join(dir, "rein.db");
    const opened = (): TestStore => {
      const store = SqliteSaver.open(path);
      return {
        store,
        destroy: async () => {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
        upgradeFromLegacy: async () => {
          await store.close();
          const rewound = rewindSqlite(path);
          return { ...opened(), rewound };
        },
      };
    };
    return Promise.resolve(opened());
  },
};

/** A fresh schema on the test Postgres server (probed once; unreachable → `available: false`). */
export async function postgresBackend(): Promise<Backend & { url: string; schema?: string }> {
  const probe = await probePostgres();
  return {
    name: "postgres",
    available: probe.available,
    url: probe.url,
    create: async () => {
      const schema = testSchemaName();
      const opened = async (): Promise<TestStore> => {
        const store = await PostgresSaver.connect({ connectionString: probe.url, schema });
        return {
          store,
          destroy: async () => {
            try {
              await store.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
            } finally {
              await store.close();
            }
          },
          upgradeFromLegacy: async () => {
            const rewound = await rewindPostgres(store.pool, schema);
            await store.close();
            return { ...(await opened()), rewound };
          },
        };
      };
      return opened();
    },
  };
}

/** Tokens of the tests: two tenants, and one token per scope. */
export const TOKENS: Record<string, TokenConfig> = {
  alice: {
    token: "alice-token-0123456789",
    subject: "alice@acme",
    tenant: "acme",
    scopes: ["read", "run", "resume"],
  },
  admin: {
    token: "admin-token-0123456789",
    subject: "root@acme",
    tenant: "acme",
    scopes: ["admin"],
  },
  reader: {
    token: "reader-token-012345678",
    subject: "rita@acme",
    tenant: "acme",
    scopes: ["read"],
  },
  runner: {
    token: "runner-token-012345678",
    subject: "ron@acme",
    tenant: "acme",
    scopes: ["read", "run"],
  },
  bob: {
    token: "bob-token-0123456789ab",
    subject: "bob@globex",
    tenant: "globex",
    scopes: ["admin"],
  },
};

/** A running server over a store, with the test tokens. */
export interface TestServer {
  url: string;
  server: ReinServer;
  store: Checkpointer;
  close(): Promise<void>;
}

/** Starts a server on a free port of 127.0.0.1. */
export async function startTestServer(
  store: Checkpointer,
  options: Partial<ServerOptions> = {},
): Promise<TestServer> {
  const server = await createServer({
    store,
    graphs,
    auth: tokenAuth(Object.values(TOKENS)),
    pingMs: 200,
    queuePollMs: 100,
    drainMs: 5_000,
    ...options,
  });
  const url = await server.listen({ port: 0, host: "127.0.0.1" });
  return { url, server, store, close: () => server.close() };
}

/** A suite's server on a fresh store of its backend: what {@link serveOn} hands its tests. */
export interface Served {
  /** The store the server runs on. */
  readonly store: Checkpointer;
  /** The running server. */
  readonly server: ReinServer;
  /** The server's base URL. */
  readonly url: string;
  /** A client with `token` of whichever server is serving when it is called. */
  client(token: string | null): Client;
  /**
   * Closes the server, replaces its store with what `next` makes of it (the store is handed over,
   * not destroyed: `next` may reopen it) and serves that with the same options.
   */
  replace<T extends TestStore>(next: (current: TestStore) => Promise<T>): Promise<T>;
}

/**
 * The fixture of a suite on one backend: before each test (or once, with `scope: "all"`) a fresh
 * store of `backend` and a server on it with `options` (a function is called each time, after the
 * suite's own earlier hooks: it may read what they made); after it, the server closed and the
 * store destroyed. Call it inside the suite's `describe`.
 */
export function serveOn(
  backend: Backend,
  options: Partial<ServerOptions> | (() => Partial<ServerOptions>) = {},
  scope: "each" | "all" = "each",
): Served {
  let store: TestStore | undefined;
  let server: TestServer | undefined;
  const optionsNow = () => (typeof options === "function" ? options() : options);
  const started = (): TestServer => {
    if (!server) throw new Error("No server: serveOn's hooks have not run.");
    return server;
  };
  const up = async (): Promise<void> => {
    store = await backend.create();
    server = await startTestServer(store.store, optionsNow());
  };
  const down = async (): Promise<void> => {
    await server?.close();
    await store?.destroy();
    server = undefined;
    store = undefined;
  };
  if (scope === "all") {
    beforeAll(up);
    afterAll(down);
  } else {
    beforeEach(up);
    afterEach(down);
  }
  return {
    get store() {
      return started().store;
    },
    get server() {
      return started().server;
    },
    get url() {
      return started().url;
    },
    client: (token) => (method, path, body, headers) =>
      client(started().url, token)(method, path, body, headers),
    async replace(next) {
      const current = store;
      if (!current) throw new Error("No store: serveOn's hooks have not run.");
      await started().close();
      server = undefined;
      store = undefined;
      const made = await next(current);
      store = made;
      server = await startTestServer(made.store, optionsNow());
      return made;
    },
  };
}

/** A response as the tests read it. */
export interface Reply<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** A client of a server: a request in, its reply out. */
export type Client = <T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<Reply<T>>;

/** A fetch wrapper: JSON in and out, a bearer token. */
export function client(url: string, token: string | null): Client {
  return async <T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply<T>> => {
    const response = await fetch(url + path, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      ...(body !== undefined
        ? { body: typeof body === "string" ? body : JSON.stringify(body) }
        : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: (text ? JSON.parse(text) : null) as T,
      headers: response.headers,
    };
  };
}

/**
 * Everything the store holds for its threads, as one string: threads, checkpoints, runs,
 * interrupts, steering and audit. Equal snapshots mean nothing was written.
 */
export async function snapshotStore(store: Checkpointer): Promise<string> {
  const threads = await store.listThreads({ limit: 1000 });
  const parts: unknown[] = [];
  for (const thread of threads.items) {
    const id = thread.threadId;
    const runs = await store.listRuns(id);
    const checkpoints = [];
    for (const stream of new Set(["", ...runs.map((r) => r.stream)]))
      checkpoints.push(await store.listCheckpoints(id, stream, { limit: 1000 }));
    parts.push({
      thread,
      runs,
      checkpoints,
      interrupts: await store.getThreadInterrupts(id),
      steering: await store.listSteering(id),
      lease: (await store.getLease(id))?.owner ?? null,
    });
  }
  parts.push(await store.listAudit({ limit: 1000 }));
  return JSON.stringify(parts);
}

/** Reads an SSE response into events until `stop` says so or the stream ends. */
export async function readSse(
  response: Response,
  stop: (event: { event: string; data: unknown; id: string | null }) => boolean = () => false,
): Promise<{ event: string; data: unknown; id: string | null }[]> {
  const events: { event: string; data: unknown; id: string | null }[] = [];
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      let data = "";
      let id: string | null = null;
      for (const line of frame.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
        else if (line.startsWith("id: ")) id = line.slice(4);
      }
      if (!data) continue;
      const parsed = { event, data: JSON.parse(data) as unknown, id };
      events.push(parsed);
      if (stop(parsed)) {
        await reader.cancel();
        return events;
      }
    }
  }
  return events;
}
