/**
 * `npm start -- --notify-demo` as a user runs it, over real processes: the demo's entry starts
 * `rein serve` with the notifier config, its webhook receiver and SMTP server; the four-eyes
 * refund's approval arrives as a verified webhook and as emails to finance with decision links;
 * approving from alice's link applies once (her approval is recorded), and a second click is
 * told the link was used; the follow-up question nobody answers is reminded, escalated and
 * declined by default, each step a verified webhook, an email, an audit line and a metric.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";

const scratch = mkdtempSync(join(tmpdir(), "rein-notify-demo-"));
let child: ChildProcess | null = null;
afterAll(async () => {
  // The demo forwards SIGTERM to its `rein serve` and exits with it.
  const running = child;
  if (running && running.exitCode === null) {
    const exited = new Promise((done) => running.once("exit", done));
    running.kill("SIGTERM");
    await exited;
  }
  rmSync(scratch, { recursive: true, force: true });
}, 60_000);

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

describe("npm start -- --notify-demo", () => {
  it("delivers the pending approval as a verified webhook and an email whose link applies once; an unanswered question is reminded, escalated and defaulted", async () => {
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
    const serve = fileURLToPath(new URL("./serve.ts", import.meta.url));
    const port = await freePort();
    const started = spawn(
      process.execPath,
      [
        "--import",
        tsx,
        "--conditions=@rein/source",
        serve,
        ...["--notify-demo", "--port", String(port), "--db", join(scratch, "desk.db")],
      ],
      {
        cwd: resolve(import.meta.dirname, "../../.."),
        stdio: ["ignore", "pipe", "pipe"],
        // The follow-up question's ladder in seconds: reminded, escalated, declined by default.
        env: { ...process.env, REIN_DEMO_LADDER: "2,4,6" },
      },
    );
    child = started;
    let out = "";
    let err = "";
    started.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
    started.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const until = async (pattern: RegExp, what: string): Promise<RegExpExecArray> => {
      const missing = () => new Error(`no ${what} in the demo's output:\n${out}\n${err}`);
      // A demo that exited stops the wait at once: its output will not grow.
      const match = await vi.waitFor(
        () => {
          const found = pattern.exec(out);
          if (found || started.exitCode !== null) return found;
          throw missing();
        },
        { timeout: 45_000, interval: 100 },
      );
      if (!match) throw missing();
      return match;
    };

    await until(/Press Ctrl\+C to stop/, "summary");
    expect(out).toContain("Notifications (--notify-demo):");
    const mailPage = (await until(/Mailbox page: +(\S+)/, "mailbox page"))[1]!;
    await until(
      /webhook interrupt\.pending \(signature verified\): ticket-2077-demo at tools/,
      "verified webhook",
    );
    // The $1,450 refund needs finance, not rita who opened it: alice and bob are mailed.
    const mail =
      /mail to alice@support-desk\.test: \[support-desk › refund_agent\] Approval needed: issue_refund \{"orderId":"2077"[^\n]*\n\[notify-demo\] +(\S+\/links\/\S+)/;
    const approve = (await until(mail, "email with links"))[1]!;
    await until(/mail to bob@support-desk\.test: \[support-desk › refund_agent\]/, "bob's email");
    expect(out).not.toContain("mail to rita@support-desk.test: [support-desk › refund_agent]");

    const page = await (await fetch(mailPage)).text();
    expect(page).toContain("[support-desk › refund_agent] Approval needed: issue_refund");

    const shown = await fetch(approve);
    expect(shown.status).toBe(200);
    expect(await shown.text()).toContain("Approve this request?");
    const post = () =>
      fetch(approve, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "",
      });
    const applied = await post();
    expect(applied.status).toBe(200);
    expect(await applied.text()).toContain("1 of 2: alice");
    const again = await post();
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("This link was already used");

    // The follow-up nobody answers goes up its ladder: support reminded, finance told of the
    // escalation, then declined by default — as webhooks, emails, audit lines and metrics.
    const followUp = (await until(/Escalation ladder: (follow-up-\S+)/, "follow-up"))[1]!;
    const token = (await until(/REIN_TOKEN=(\S+)/, "the demo admin token"))[1]!;
    for (const type of ["reminded", "escalated", "expired"])
      await until(
        new RegExp(`webhook interrupt\\.${type} \\(signature verified\\): ${followUp}`),
        `the follow-up's interrupt.${type} webhook`,
      );
    await until(/mail to riley@support-desk\.test: \[follow-up\] Reminder: /, "the reminder");
    await until(/mail to alice@support-desk\.test: \[follow-up\] Escalated: /, "the escalation");
    const headers = { authorization: `Bearer ${token}` };
    const url = `http://127.0.0.1:${port}`;
    const audit = (await (
      await fetch(`${url}/audit?threadId=${followUp}`, { headers })
    ).json()) as { items: { action: string; actor: string }[] };
    expect(audit.items.filter((a) => a.actor === "system:timer").map((a) => a.action)).toEqual([
      "remind",
      "escalate",
      "timeout",
    ]);
    const metrics = await (await fetch(`${url}/metrics`, { headers })).text();
    expect(metrics).toMatch(
      /rein_approval_escalations_total\{stage="remind",graph="follow-up"\} 1/,
    );
    expect(metrics).toMatch(
      /rein_approval_escalations_total\{stage="escalate",graph="follow-up"\} 1/,
    );
    expect(metrics).toMatch(
      /rein_approval_answers_total\{graph="follow-up",decision="timeout",actor_type="timer"\} 1/,
    );
  }, 120_000);
});
