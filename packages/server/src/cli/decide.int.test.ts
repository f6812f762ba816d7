/**
 * `rein decide` spawned as a user runs it, against `rein serve` with tokens that carry groups:
 * one decision over a list of ids or a filter with its expected count, all or nothing, with
 * human tables, `--json`, and the exit codes of the other commands (4 on a 409, 3 on a 403).
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReinClient, type InterruptListItem } from "@rein/client";

const BIN = resolve(import.meta.dirname, "../../bin/rein.mjs");
const GRAPHS = resolve(import.meta.dirname, "../testing/governed-graphs.ts");

const person = (name: string, groups: string[]) => ({
  token: `${name}-decide-token-0123456789`,
  subject: `${name}@acme`,
  tenant: "acme",
  scopes: ["read", "run", "resume"],
  groups,
});
/** Alice and bob approve for finance; carol starts the runs; dave is in support. */
const PEOPLE = {
  alice: person("alice", ["finance"]),
  bob: person("bob", ["finance"]),
  carol: person("carol", ["finance"]),
  dave: person("dave", ["support"]),
};

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function rein(args: string[], env: Record<string, string>): Promise<Outcome> {
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

function startServe(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--port", "0", "--log-level", "silent", ...args],
    { stdio: ["ignore", "pipe", "pipe"] },
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

describe("rein decide", { timeout: 120_000 }, () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startServe>>;
  let as: (who: keyof typeof PEOPLE) => Record<string, string>;
  let carol: ReinClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rein-decide-"));
    writeFileSync(join(dir, "tokens.json"), JSON.stringify({ tokens: Object.values(PEOPLE) }));
    server = await startServe([
      "--db",
      join(dir, "rein.db"),
      "--graphs",
      GRAPHS,
      "--tokens",
      join(dir, "tokens.json"),
    ]);
    as = (who) => ({ REIN_URL: server.url, REIN_TOKEN: PEOPLE[who].token });
    carol = new ReinClient({ baseUrl: server.url, token: PEOPLE.carol.token });
  }, 60_000);
  afterAll(() => {
    server.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  /** The pending interrupts of `threadId`, by the graph of the run that asked. */
  async function pending(threadId: string): Promise<Record<string, InterruptListItem>> {
    const page = await carol.listInterrupts({ threadId });
    return Object.fromEntries(page.items.map((i) => [i.graph, i]));
  }

  /** A `desk` thread started by carol: its refund and email sub-agents both wait. */
  async function desk(threadId: string): Promise<Record<string, InterruptListItem>> {
    await carol.createThread({ graph: "desk", threadId });
    await carol.startRun(threadId, { input: {}, wait: true });
    return pending(threadId);
  }

  /** A `governed` refund of `amount` started by carol, paused on its question. */
  async function refund(threadId: string, amount: number): Promise<InterruptListItem> {
    await carol.createThread({ graph: "governed", threadId });
    await carol.startRun(threadId, { input: { amount }, wait: true });
    return (await carol.listInterrupts({ threadId })).items[0]!;
  }

  it("accepts a list of ids at once and prints what it decided", async () => {
    const threads = ["d-1", "d-2", "d-3"];
    const emails = await Promise.all(threads.map(async (t) => (await desk(t))["email_agent"]!));
    const ids = emails.map((e) => e.id);
    const decided = await rein(["decide", "--ids", ids.join(","), "--accept"], as("alice"));
    expect(decided.code, decided.stderr).toBe(0);
    const lines = decided.stdout.trim().split("\n");
    expect(lines[0]).toBe("decided 3 interrupts");
    expect(lines[1]).toMatch(/^INTERRUPT\s+THREAD\s+STATUS$/);
    expect(
      lines
        .slice(2)
        .map((l) => l.split(/\s+/))
        .sort(),
    ).toEqual(emails.map((e) => [e.id, e.threadId, "answered"]).sort());
    for (const t of threads) expect(Object.keys(await pending(t))).toEqual(["refund_agent"]);
  });

  it("decides by filter only when the count is the one expected, with --json", async () => {
    // The refunds of d-1..d-3 are what is pending of desk's refund sub-agent.
    const before = await carol.listInterrupts({ graph: "desk", subAgentGraph: "refund_agent" });
    expect(before.total).toBe(3);
    const filter = ["decide", "--graph", "desk", "--sub-agent", "refund_agent", "--reject"];
    const wrong = await rein([...filter, "--expect", "4", "--json"], as("alice"));
    expect(wrong.code).toBe(4);
    expect(JSON.parse(wrong.stdout)).toMatchObject({
      error: "count_mismatch",
      details: { expected: 4, actual: 3 },
    });
    const human = await rein([...filter, "--expect", "4"], as("alice"));
    expect(human.stderr).toContain("nothing was decided: expected 4, the filter matches 3 now");
    expect((await carol.listInterrupts({ graph: "desk" })).total).toBe(3);

    const right = await rein([...filter, "--expect", "3", "--json"], as("alice"));
    expect(right.code, right.stderr).toBe(0);
    const body = JSON.parse(right.stdout) as { count: number; decided: { status: string }[] };
    expect(body.count).toBe(3);
    expect(body.decided.map((d) => d.status)).toEqual(["answered", "answered", "answered"]);
    expect((await carol.listInterrupts({ graph: "desk" })).total).toBe(0);
    // The answered threads continue in the background.
    await expect
      .poll(async () => (await carol.getState("d-2")).values["log"], { timeout: 10_000 })
      .toContain("refund_agent: skipped (ignore)");
  });

  it("applies nothing when the policy refuses one of the ids, and names it: exit 4", async () => {
    const { email_agent: email } = await desk("d-4");
    const big = await refund("big-1", 1500);
    const ids = `${email!.id},${big.id}`;
    const refused = await rein(["decide", "--ids", ids, "--accept"], as("dave"));
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/^rein: bulk_refused \(409\): /);
    expect(refused.stderr).toContain("nothing was decided; refused:");
    expect(refused.stderr).toMatch(new RegExp(`${big.id}\\s+not_allowed\\s+\\S`));
    expect(refused.stderr).not.toMatch(new RegExp(`${email!.id}\\s+not_allowed`));
    const json = await rein(["decide", "--ids", ids, "--accept", "--json"], as("dave"));
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stdout)).toMatchObject({
      error: "bulk_refused",
      details: { refused: [{ interruptId: big.id, code: "not_allowed" }] },
    });
    // Nothing applied: the email still waits, the refund has no approval.
    expect((await pending("d-4"))["email_agent"]?.id).toBe(email!.id);
    expect((await pending("big-1"))["governed"]?.approval?.approvals).toEqual([]);
  });

  it("records a partial approval, refuses a second one by the same person, and applies on the second approver's", async () => {
    const big = await refund("big-2", 2500);
    const first = await rein(["decide", "--ids", big.id, "--accept"], as("alice"));
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^decided 1 interrupt \(1 still wait for more approvals\)\n/);
    expect(first.stdout).toMatch(new RegExp(`${big.id}\\s+big-2\\s+approval recorded`));
    const again = await rein(["decide", "--ids", big.id, "--accept", "--json"], as("alice"));
    expect(again.code).toBe(4);
    expect(JSON.parse(again.stdout)).toMatchObject({
      error: "bulk_refused",
      details: { refused: [{ interruptId: big.id, code: "not_allowed" }] },
    });
    const approvals = (await pending("big-2"))["governed"]?.approval?.approvals;
    expect(approvals?.map((a) => a.actor)).toEqual(["alice@acme"]);

    // The requester answering alone is a 403: exit 3, the rule named, nothing stored.
    const own = await rein(
      ["resume", "big-2", "--interrupt", big.id, "--value", '{"type":"accept"}'],
      as("carol"),
    );
    expect(own.code).toBe(3);
    expect(own.stderr).toMatch(/not_allowed \(403\)[\s\S]*nothing was stored \(rule requester;/);
    expect((await pending("big-2"))["governed"]?.approval?.approvals).toHaveLength(1);

    const second = await rein(["decide", "--ids", big.id, "--accept"], as("bob"));
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(new RegExp(`${big.id}\\s+big-2\\s+answered`));
    await expect
      .poll(async () => (await carol.getState("big-2")).values["outcome"], { timeout: 10_000 })
      .toBe("refunded 2500");
  });

  it("refuses a command line that does not say what or which: exit 2, nothing sent", async () => {
    const env = as("alice");
    const cases = [
      ["decide", "--accept"],
      ["decide", "--ids", "a,b"],
      ["decide", "--ids", "a", "--accept", "--reject"],
      ["decide", "--ids", "a", "--value", "{nope"],
      ["decide", "--graph", "desk", "--accept"],
      ["decide", "--graph", "desk", "--expect", "0", "--accept"],
      ["decide", "--ids", "a", "--graph", "desk", "--accept"],
      ["decide", "--ids", ",", "--accept"],
    ];
    for (const args of cases) {
      const outcome = await rein([...args, "--json"], env);
      expect(outcome.code, args.join(" ")).toBe(2);
      expect(JSON.parse(outcome.stdout), args.join(" ")).toMatchObject({ error: "usage" });
    }
  });
});
