/**
 * The `rein` bin, spawned as a user runs it: `serve` with tokens and with `--open`, the client
 * commands with human tables and `--json`, exit codes, and a graceful stop on SIGTERM.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS } from "../testing/harness.ts";

const BIN = resolve(import.meta.dirname, "../../bin/rein.mjs");
const GRAPHS = resolve(import.meta.dirname, "../testing/graphs.ts");

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

/** Spawns `rein serve` and resolves with its URL once it listens. */
function startServe(
  args: string[],
): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--port", "0", "--log-level", "silent", ...args],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let err = "";
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolveUrl, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (\S+)/.exec(out);
      if (match?.[1]) resolveUrl({ child, url: match[1], stderr: () => err });
    });
    child.on("exit", (code) => reject(new Error(`rein serve exited ${code}: ${err}`)));
  });
}

/** The exit code once the process has exited and its output pipes are drained ("close", not "exit"). */
function stopped(child: ChildProcess): Promise<number | null> {
  return new Promise((done) => child.on("close", (code) => done(code)));
}

describe("the rein CLI", { timeout: 120_000 }, () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startServe>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rein-cli-"));
    writeFileSync(join(dir, "tokens.json"), JSON.stringify({ tokens: Object.values(TOKENS) }));
    server = await startServe([
      "--db",
      join(dir, "rein.db"),
      "--graphs",
      GRAPHS,
      "--tokens",
      join(dir, "tokens.json"),
    ]);
    env = { REIN_URL: server.url, REIN_TOKEN: TOKENS["alice"]!.token };
  }, 60_000);
  afterAll(() => {
    server.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("starts a thread, lists the queue, answers one sub-agent, steers, and shows state, history and runs", async () => {
    const start = await rein(["start", "desk", "--thread", "cli-1"], env);
    expect(start.code).toBe(0);
    expect(start.stdout).toMatch(
      /^thread cli-1\nrun \S+ interrupted\nwaiting on:\nINTERRUPT\s+NAMESPACE\s+NODE\s+PAYLOAD\n/,
    );
    const queue = await rein(["interrupts", "--thread", "cli-1", "--json"], env);
    const page = JSON.parse(queue.stdout) as { items: { id: string; graph: string }[] };
    expect(page.items.map((i) => i.graph).sort()).toEqual(["email_agent", "refund_agent"]);
    const human = await rein(["interrupts"], env);
    expect(human.stdout.split("\n")[0]).toMatch(
      /^INTERRUPT\s+THREAD\s+PATH\s+NODE\s+AGE\s+PAYLOAD$/,
    );
    expect(human.stdout).toContain("desk > refund_agent");
    const refund = page.items.find((i) => i.graph === "refund_agent")!;
    const email = page.items.find((i) => i.graph === "email_agent")!;
    const steer = await rein(["steer", "cli-1", "be brief", "--interrupt", email.id], env);
    expect(steer.stdout).toMatch(/^steering s_\S+ recorded for run r_\S+ by alice@acme\n$/);
    const answered = await rein(
      ["resume", "cli-1", "--interrupt", refund.id, "--value", '{"type":"accept"}', "--key", "k-1"],
      env,
    );
    expect(answered.code).toBe(0);
    expect(answered.stdout).toContain(email.id);
    const again = await rein(
      ["resume", "cli-1", "--interrupt", email.id, "--value", '{"type":"accept"}', "--json"],
      env,
    );
    expect(JSON.parse(again.stdout)).toMatchObject({ status: "done" });
    const state = await rein(["state", "cli-1"], env);
    expect(state.stdout).toContain("email_agent: email");
    const history = await rein(["history", "cli-1", "--limit", "2"], env);
    expect(history.stdout.split("\n")[0]).toMatch(/^CHECKPOINT\s+STEP\s+SOURCE\s+NEXT\s+PENDING$/);
    expect(history.stdout.trim().split("\n")).toHaveLength(3);
    const runs = await rein(["runs", "cli-1"], env);
    expect(runs.stdout.match(/\bdone\b/g)).toHaveLength(3);
    const threads = await rein(["threads", "--json"], env);
    expect(
      (JSON.parse(threads.stdout) as { items: { threadId: string; status: string }[] }).items,
    ).toMatchObject([{ threadId: "cli-1", status: "done" }]);
  });

  it("exits 4 on a stale answer (printing the latest), 3 on a refusal, 2 on usage errors", async () => {
    await rein(["start", "ask", "--thread", "cli-2"], env);
    const ok = await rein(["resume", "cli-2", "--value", '{"text":"yes"}'], env);
    expect(ok.code).toBe(0);
    const stale = await rein(["resume", "cli-2", "--run", "nope", "--value", "1"], env);
    expect(stale.code).toBe(3);
    expect(stale.stderr).toMatch(/not_found \(404\)/);
    await rein(["start", "desk", "--thread", "cli-3"], env);
    const ambiguous = await rein(["resume", "cli-3", "--value", '{"type":"accept"}'], env);
    expect(ambiguous.code).toBe(4);
    expect(ambiguous.stderr).toMatch(/ambiguous_resume \(409\)[\s\S]*latest:/);
    const badToken = await rein(["threads"], { ...env, REIN_TOKEN: "wrong-token-0123456789" });
    expect(badToken.code).toBe(3);
    expect(badToken.stderr).toMatch(/unauthorized \(401\)/);
    expect(badToken.stderr).not.toContain("wrong-token");
    expect((await rein(["resume", "cli-2"], env)).code).toBe(2);
    expect((await rein(["resume", "cli-2", "--value", "{nope"], env)).code).toBe(2);
    expect((await rein(["bogus"], env)).code).toBe(2);
    expect((await rein(["threads", "--no-such-flag"], env)).code).toBe(2);
    expect(
      (await rein(["threads"], { REIN_URL: "http://127.0.0.1:1", REIN_TOKEN: "x" })).code,
    ).toBe(1);
  });

  it("answering or steering an interrupt that is not pending exits 4 and, with --json, prints the error object", async () => {
    await rein(["start", "desk", "--thread", "cli-4"], env);
    const queue = await rein(["interrupts", "--thread", "cli-4", "--json"], env);
    const [first] = (JSON.parse(queue.stdout) as { items: { id: string }[] }).items;
    const answer = ["resume", "cli-4", "--interrupt", first!.id, "--value", '{"type":"accept"}'];
    expect((await rein(answer, env)).code).toBe(0);
    const before = (await rein(["history", "cli-4", "--json"], env)).stdout;
    for (const args of [
      [...answer, "--json"],
      ["steer", "cli-4", "too late", "--interrupt", first!.id, "--json"],
    ]) {
      const again = await rein(args, env);
      expect(again.code, args.join(" ")).toBe(4);
      const error = JSON.parse(again.stdout) as { error: string; details: Record<string, unknown> };
      expect(error).toMatchObject({ error: "stale_target", details: { threadId: "cli-4" } });
      expect(error.details["pendingInterrupts"]).toHaveLength(1);
      expect(again.stderr).toMatch(/stale_target \(409\)/);
    }
    // Nothing was answered or steered by the refused commands (history shows both).
    expect((await rein(["history", "cli-4", "--json"], env)).stdout).toBe(before);
  });

  it("prints every error as JSON with --json, with the exit code of its class", async () => {
    const cases: [string[], Record<string, string>, number, string][] = [
      [["resume", "cli-2", "--value", "1", "--json"], env, 4, "stale_target"],
      [["history", "nope", "--json"], env, 3, "not_found"],
      [["threads", "--json"], { ...env, REIN_TOKEN: "wrong-token-0123456789" }, 3, "unauthorized"],
      [["resume", "cli-2", "--json"], env, 2, "usage"],
      [["threads", "--json"], { REIN_URL: "http://127.0.0.1:1", REIN_TOKEN: "x" }, 1, "failure"],
      [
        [
          "serve",
          "--open",
          "--graphs",
          GRAPHS,
          "--postgres",
          "postgres://postgres@127.0.0.1:1/x",
          "--json",
        ],
        {},
        1,
        "store_unavailable",
      ],
    ];
    for (const [args, vars, code, error] of cases) {
      const outcome = await rein(args, vars);
      expect(outcome.code, args.join(" ")).toBe(code);
      const body = JSON.parse(outcome.stdout) as Record<string, unknown>;
      expect(body, args.join(" ")).toMatchObject({ error, message: expect.any(String) as string });
      expect(typeof body["details"]).toBe("object");
    }
  });

  it("rein keys: an admin creates a key (printed once), lists it without the secret, revokes it, and the server refuses it", async () => {
    const asAdmin = { ...env, REIN_TOKEN: TOKENS["admin"]!.token };
    const created = await rein(
      ["keys", "create", "--name", "nightly", "--scopes", "read,run", "--expires", "30d"],
      asAdmin,
    );
    expect(created.code).toBe(0);
    const key = /^(rein_[a-z0-9]{8})_\S{43}$/m.exec(created.stdout);
    expect(key).not.toBeNull();
    const [whole, id] = [key![0], key![1]!];
    expect(created.stdout).toContain(`key ${id} (nightly) of acme: read,run`);
    const whoami = await fetch(`${server.url}/whoami`, {
      headers: { authorization: `Bearer ${whole}` },
    });
    expect(whoami.status).toBe(200);

    const listed = await rein(["keys", "list"], asAdmin);
    expect(listed.stdout.split("\n")[0]).toMatch(
      /^KEY\s+NAME\s+SCOPES\s+EXPIRES\s+STATUS\s+LAST USED$/,
    );
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain("active");
    expect(listed.stdout).not.toContain(whole);

    const revoked = await rein(["keys", "revoke", id], asAdmin);
    expect(revoked.stdout).toMatch(new RegExp(`^key ${id} revoked at \\S+\n$`));
    const refused = await fetch(`${server.url}/whoami`, {
      headers: { authorization: `Bearer ${whole}` },
    });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toBe("key_revoked");
    const json = await rein(["keys", "list", "--json"], asAdmin);
    const keys = JSON.parse(json.stdout) as { id: string; revokedAt: string | null }[];
    expect(keys.map((k) => k.id)).toEqual([id]);
    expect(keys[0]?.revokedAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    // Not an admin: refused (exit 3); no scopes: a usage error (exit 2).
    expect((await rein(["keys", "list"], env)).code).toBe(3);
    expect((await rein(["keys", "create", "--name", "x"], asAdmin)).code).toBe(2);
  });

  it("serves in --open mode on loopback only, with a warning, and stops gracefully on SIGTERM", async () => {
    const refused = await rein([
      "serve",
      "--open",
      "--host",
      "0.0.0.0",
      "--graphs",
      GRAPHS,
      "--db",
      join(dir, "open.db"),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("loopback only");
    const noAuth = await rein(["serve", "--graphs", GRAPHS, "--db", join(dir, "open.db")], {
      REIN_TOKENS: "",
    });
    expect(noAuth.code).toBe(2);
    expect(noAuth.stderr).toMatch(/No tokens/);
    const open = await startServe(["--open", "--graphs", GRAPHS, "--db", join(dir, "open.db")]);
    expect(open.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(open.stderr()).toContain("WARNING: open mode");
    const threads = await rein(["threads", "--json"], { REIN_URL: open.url });
    expect(threads.code).toBe(0);
    const exit = stopped(open.child);
    open.child.kill("SIGTERM");
    expect(await exit).toBe(0);
    expect(open.stderr()).toContain("rein serve: stopped");
  });
});
