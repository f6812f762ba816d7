import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { SqliteSaver } from "@rein/sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { closeMailServers, mailTools } from "./agents.ts";
import { DeskFiles } from "./desk-data.ts";
import { runWalkthrough } from "./walkthrough.ts";

const scratch = mkdtempSync(join(tmpdir(), "rein-support-desk-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the support-desk demo", () => {
  it("runs end to end: one refund with the edited amount, one email, steering reaching the refund model", async () => {
    const dataDir = join(scratch, "walkthrough");
    const store = SqliteSaver.open(join(dataDir, "desk.db"));
    const lines: string[] = [];
    try {
      const result = await runWalkthrough({
        store,
        dataDir,
        threadId: "ticket-test",
        print: (t) => lines.push(t),
      });
      expect(result.status).toBe("done");
      const files = new DeskFiles(dataDir);
      expect(files.ledger().map((e) => [e.orderId, e.amount])).toEqual([["1042", 60]]);
      expect(files.outbox()).toHaveLength(1);
      expect(files.outbox()[0]?.content).toContain("To: dana.reyes@example.com");
      expect(result.values.refundReport).toBe(
        'Refund result: {"receipt":"' +
          (files.ledger()[0]?.receipt ?? "") +
          '","amount":60}. Reviewer guidance applied: Pro rata: only one of the two mugs broke.',
      );
      const out = lines.join("\n");
      expect(out).toContain("InvalidAnswerError (invalid_answer)");
      expect(out).toContain("args.amount: Invalid input: expected number, received string");
      expect(out).toContain("refund interrupt still pending");
      expect(out).toContain("StaleTargetError (stale_target)");
      expect(out).toMatch(/still pending: i_\S+ at email\/tools/);
      // The stored conversation shows what ran and who edited it, and the steering note.
      expect(out).toContain(
        'tool issue_refund ran with {"orderId":"1042","amount":60,"reason":"one of two mugs broke"} (edit by alice@example.com, model asked {"orderId":"1042","amount":120,"reason":"arrived damaged"})',
      );
      expect(out).toContain(
        "user (steering): [Steering from alice@example.com] Pro rata: only one of the two mugs broke.",
      );
    } finally {
      await store.close();
    }
  }, 60_000);

  it("npm run demo's entry point prints the queue as a table and leaves exactly one refund", async () => {
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
    const demo = fileURLToPath(new URL("./demo.ts", import.meta.url));
    const dataDir = join(scratch, "cli");
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", tsx, demo, "--data", dataDir],
      { cwd: scratch },
    );
    expect(stdout).toMatch(
      /run-tree path +node +task id +sub-agent id +checkpoint id +interrupt id +asks/,
    );
    expect(stdout).toMatch(
      /support-desk\/refund > refund_agent\/tools +tools +t_\S+ +refund_agent:r_\S+ +\S+ +i_\S+ +issue_refund/,
    );
    expect(stdout).toMatch(
      /support-desk\/email > email_agent\/tools +tools +t_\S+ +email_agent:r_/,
    );
    expect(stdout).toContain("run done.");
    expect(stdout).toContain("== Ledger: 1 refund(s) for this thread");
    expect(stdout).toContain("== Outbox: 1 email(s) for this thread");
    const ledger = readFileSync(join(dataDir, "ledger.jsonl"), "utf8").trim().split("\n");
    expect(ledger).toHaveLength(1);
    expect(JSON.parse(ledger[0] ?? "{}")).toMatchObject({ orderId: "1042", amount: 60 });
  }, 60_000);
});

describe("the interactive demo", () => {
  it("lets a person answer every question from the terminal", async () => {
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
    const demo = fileURLToPath(new URL("./demo.ts", import.meta.url));
    const dataDir = join(scratch, "interactive");
    const child = execFile(
      process.execPath,
      ["--import", tsx, demo, "--interactive", "--data", dataDir],
      {
        cwd: scratch,
      },
    );
    let stdout = "";
    child.stdout?.on("data", (chunk: string) => (stdout += chunk));
    // The actor's name; accept the dispatch; then accept the first pending row twice (refund
    // and email, whichever is listed first), once with a steering note.
    child.stdin?.end("dana\n1\naccept\n\n1\naccept\nDouble-check the address.\n1\naccept\n\n");
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(0);
    expect(stdout).toContain("run done.");
    expect(stdout).toMatch(/run-tree path +node +task id/);
    const files = new DeskFiles(dataDir);
    expect(files.ledger().map((e) => e.amount)).toEqual([120]);
    expect(files.outbox()).toHaveLength(1);
  }, 60_000);
});

describe("the email agent's tools", () => {
  it("come from the desk's mail MCP server, with the server's schema and the send approval", async () => {
    const dataDir = join(scratch, "mcp");
    const mail = mailTools(dataDir);
    try {
      const tools = await mail.tools();
      expect(tools.map((t) => t.name)).toEqual(["send_email"]);
      expect(tools[0]?.jsonSchema).toMatchObject({
        properties: { to: { type: "string", format: "email" } },
        required: ["to", "subject", "body"],
      });
      const needs = tools[0]?.needsApproval as (args: unknown) => boolean;
      expect(needs({ to: "a@b.c", subject: "s", body: "b" })).toBe(true);
    } finally {
      await closeMailServers();
    }
  });
});
