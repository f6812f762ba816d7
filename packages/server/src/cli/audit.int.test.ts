/**
 * `rein audit verify` and `rein audit export`, spawned as a user runs them, against `rein serve`
 * on SQLite and on Postgres: OK on an intact log; after a manual UPDATE of one audit row, exit 5
 * naming that row — through the server and straight on the store.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probePostgres, testSchemaName } from "@rein/postgres/testing";
import { TOKENS } from "../testing/harness.ts";

const BIN = resolve(import.meta.dirname, "../../bin/rein.mjs");
const GRAPHS = resolve(import.meta.dirname, "../testing/graphs.ts");
const probe = await probePostgres();

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function rein(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** Spawns `rein serve` with the audit key and resolves with its URL once it listens. */
function startServe(
  args: string[],
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--port", "0", "--log-level", "silent", "--graphs", GRAPHS, ...args],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } },
  );
  let err = "";
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolveUrl, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (\S+)/.exec(out);
      if (match?.[1]) resolveUrl({ child, url: match[1] });
    });
    child.on("exit", (code) => reject(new Error(`rein serve exited ${code}: ${err}`)));
  });
}

/** A store the CLI is pointed at, and the manual SQL an operator would run on it. */
interface Target {
  name: string;
  available: boolean;
  /** `--db FILE` or `--postgres URL --schema S`. */
  storeArgs(dir: string): string[];
  /** Runs one statement on the audit table (`{audit}` in the text). */
  sql(dir: string, text: string): Promise<void>;
  cleanup(): Promise<void>;
}

const schema = testSchemaName();
const targets: Target[] = [
  {
    name: "sqlite",
    available: true,
    storeArgs: (dir) => ["--db", join(dir, "rein.db")],
    sql: (dir, text) => {
      const db = new DatabaseSync(join(dir, "rein.db"));
      try {
        db.exec("PRAGMA busy_timeout = 5000");
        db.exec(text.replaceAll("{audit}", "audit"));
      } finally {
        db.close();
      }
      return Promise.resolve();
    },
    cleanup: () => Promise.resolve(),
  },
  {
    name: "postgres",
    available: probe.available,
    storeArgs: () => ["--postgres", probe.url, "--schema", schema],
    sql: async (_dir, text) => {
      const client = new pg.Client({ connectionString: probe.url });
      await client.connect();
      try {
        await client.query(text.replaceAll("{audit}", `"${schema}".audit`));
      } finally {
        await client.end();
      }
    },
    cleanup: async () => {
      const client = new pg.Client({ connectionString: probe.url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
    },
  },
];

for (const target of targets) {
  describe.skipIf(!target.available)(`rein audit on ${target.name}`, { timeout: 240_000 }, () => {
    let dir: string;
    let server: { child: ChildProcess; url: string };
    let env: Record<string, string>;
    const key = { REIN_AUDIT_KEY: "cli-audit-key" };

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "rein-cli-audit-"));
      writeFileSync(join(dir, "tokens.json"), JSON.stringify({ tokens: Object.values(TOKENS) }));
      server = await startServe(
        [...target.storeArgs(dir), "--tokens", join(dir, "tokens.json")],
        key,
      );
      env = { REIN_URL: server.url, REIN_TOKEN: TOKENS["alice"]!.token };
    }, 60_000);
    afterAll(async () => {
      server.child.kill("SIGKILL");
      await target.cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    it("says OK, then after a manual UPDATE of one audit row names that row and exits 5", async () => {
      for (const thread of ["au-1", "au-2"]) {
        expect((await rein(["start", "ask", "--thread", thread], env)).code).toBe(0);
        if (thread === "au-2") expect((await rein(["steer", thread, "thanks"], env)).code).toBe(0);
        expect((await rein(["resume", thread, "--value", '{"text":"yes"}'], env)).code).toBe(0);
      }
      const ok = await rein(["audit", "verify"], env);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toMatch(
        /^OK: audit chain verified: 3 entries in 2 chains; 0 signed heads checked, 2 signed\n$/,
      );
      const exported = await rein(["audit", "export", "--thread", "au-2"], env);
      expect(exported.code).toBe(0);
      const lines = exported.stdout
        .trimEnd()
        .split("\n")
        .map(
          (text) =>
            JSON.parse(text) as { n: number; hash: string; record: { id: string; action: string } },
        );
      expect(lines.map((l) => [l.n, l.record.action])).toEqual([
        [1, "steer"],
        [2, "answer"],
      ]);
      const target2 = lines[0]!;

      await target.sql(
        dir,
        `UPDATE {audit} SET record = replace(record, 'alice@acme', 'eve@acme') WHERE hash = '${target2.hash}'`,
      );
      const broken = await rein(["audit", "verify"], env);
      expect(broken.code).toBe(5);
      expect(broken.stdout).toContain(
        `BROKEN: Audit chain broken at thread "au-2", entry 1 (audit record "${target2.record.id}")`,
      );
      expect(broken.stdout).toContain("reason hash_mismatch");
      const json = await rein(["audit", "verify", "--json"], env);
      expect(json.code).toBe(5);
      expect(JSON.parse(json.stdout)).toMatchObject({
        ok: false,
        firstBroken: { threadId: "au-2", n: 1, id: target2.record.id, reason: "hash_mismatch" },
      });
      // Straight on the store, as an auditor holding the database would, with the same result.
      const direct = await rein(["audit", "verify", "--json", ...target.storeArgs(dir)], key);
      expect(direct.code).toBe(5);
      expect(JSON.parse(direct.stdout)).toMatchObject({
        firstBroken: { threadId: "au-2", id: target2.record.id, reason: "hash_mismatch" },
      });
    });
  });
}
