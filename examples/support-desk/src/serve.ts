/**
 * `npm start`: the whole product on the embedded SQLite default. Starts `rein serve --open` with
 * the support-desk demo on `.rein/support-desk.db`, opens demo threads whose refund and email
 * sub-agents wait for approval at the same time, and prints where to look.
 *
 * Options: `--port N` (default 8080, `PORT`; the CLI's default URL), `--threads N` demo threads to
 * open (default 2), `--more` to open that many new ones even when the demo's threads exist (a
 * re-run otherwise reuses them, so threads do not pile up with every `npm start`), `--log-level`
 * of the server's log (default warn), which goes to `rein-serve.log` beside the database.
 *
 * `--tokens FILE` (e.g. `npm start -- --tokens examples/support-desk/tokens.json`) serves with
 * those tokens instead of open mode, on `.rein/support-desk-governed.db`: the threads are opened
 * by the file's first token that may run (the requester), and one more ticket asks for a $1,450
 * refund, which two people from `finance` other than the requester must approve.
 *
 * `--notify-demo` (implies the tokens of `examples/support-desk/tokens.json` unless `--tokens`
 * names others) starts, in this process, a webhook receiver that verifies and prints each webhook
 * and an SMTP server that prints each email's subject and links (the last ones at
 * `GET /demo/mail` on the receiver's port), subscribes the receiver to every event, and serves
 * with `--notify`: each token's subject becomes a person at `<subject>@support-desk.test`.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { ReinApiError, ReinClient } from "@rein/client";
import { largeTicket } from "./desk-data.ts";
import { followUpLadder } from "./follow-up.ts";
import { readTokens, startNotifyDemo, writeNotifyConfig, type NotifyDemo } from "./notify-demo.ts";

/** The first token of a tokens file that may start runs (`run` or `admin` scope). */
function requesterToken(file: string): { token: string; subject: string } {
  const parsed = JSON.parse(readFileSync(file, "utf8")) as
    | { tokens: { token: string; subject: string; scopes: string[] }[] }
    | { token: string; subject: string; scopes: string[] }[];
  const list = Array.isArray(parsed) ? parsed : parsed.tokens;
  const found = list.find((t) => t.scopes.includes("run") || t.scopes.includes("admin"));
  if (!found)
    throw new Error(`${file} has no token with the "run" scope to open the demo threads.`);
  return found;
}

const { values } = parseArgs({
  options: {
    port: { type: "string", default: process.env["PORT"] ?? "8080" },
    threads: { type: "string", default: "2" },
    db: { type: "string", default: ".rein/support-desk.db" },
    more: { type: "boolean", default: false },
    tokens: { type: "string" },
    "notify-demo": { type: "boolean", default: false },
    "log-level": { type: "string", default: "warn" },
  },
});
const notifyDemo = values["notify-demo"];
/** The follow-up question's ladder (checked before anything starts). */
const ladder = followUpLadder();
/** The tokens file, and the requester: its first token that may start runs. */
const tokensFile =
  values.tokens !== undefined
    ? resolve(values.tokens)
    : notifyDemo
      ? resolve(import.meta.dirname, "../tokens.json")
      : undefined;
const requester = tokensFile ? requesterToken(tokensFile) : undefined;
const db =
  tokensFile && values.db === ".rein/support-desk.db"
    ? ".rein/support-desk-governed.db"
    : values.db;
const root = resolve(import.meta.dirname, "../../..");
const bin = resolve(root, "packages/server/bin/rein.mjs");
const graphs = resolve(import.meta.dirname, "graphs.ts");
/**
 * The server's JSON log lines go to this file, beside the database: on the terminal they would
 * interleave with the summary, the webhooks and the emails this demo prints.
 */
const logFile = resolve(dirname(resolve(root, db)), "rein-serve.log");
mkdirSync(dirname(logFile), { recursive: true });
const serverLog = createWriteStream(logFile, { flags: "a" });

/**
 * With `--notify-demo`: the receiver and SMTP server, the notifier config, and the tokens the
 * server gets (the demo's plus an admin token of this process, to subscribe the receiver).
 */
let demo: NotifyDemo | null = null;
let demoAdmin: string | null = null;
let served = tokensFile;
let notifyFile: string | null = null;
if (notifyDemo && tokensFile) {
  demo = await startNotifyDemo((line) => process.stdout.write(`[notify-demo] ${line}\n`));
  const dir = dirname(resolve(root, db));
  const tokens = readTokens(tokensFile);
  notifyFile = resolve(dir, "notify-demo.json");
  writeNotifyConfig({
    file: notifyFile,
    publicUrl: `http://127.0.0.1:${values.port}`,
    smtpUrl: demo.smtpUrl,
    tokens,
  });
  demoAdmin = `demo-admin-${randomBytes(18).toString("base64url")}`;
  const tenant = (tokens[0] as { tenant?: string } | undefined)?.tenant ?? "demo";
  served = resolve(dir, "notify-demo-tokens.json");
  writeFileSync(
    served,
    JSON.stringify({
      tokens: [
        ...tokens,
        { token: demoAdmin, subject: "notify-demo", tenant, scopes: ["admin", "metrics"] },
      ],
    }),
    { mode: 0o600 },
  );
}

const server = spawn(
  process.execPath,
  [
    bin,
    "serve",
    ...(served ? ["--tokens", served] : ["--open"]),
    ...(notifyFile ? ["--notify", notifyFile] : []),
    "--db",
    db,
    "--graphs",
    graphs,
    "--port",
    values.port,
    "--log-level",
    values["log-level"],
  ],
  {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    // The repository's sources, not a build (see docs/packaging.md).
    env: {
      ...process.env,
      NODE_OPTIONS: `${process.env["NODE_OPTIONS"] ?? ""} --conditions=@rein/source`,
      // The demo's deliveries go out within a quarter second.
      ...(notifyDemo ? { REIN_WEBHOOK_POLL_MS: process.env["REIN_WEBHOOK_POLL_MS"] ?? "250" } : {}),
    },
  },
);
const stop = (): void => {
  server.kill("SIGTERM");
  void demo?.close();
};
// The desk's MCP mail server closes through the graph module's close hook (graphs.ts), so
// `rein serve` ends by itself once it has stopped.
server.stderr.pipe(process.stderr);
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
server.once("exit", (code) => process.exit(code ?? 0));

const url = await new Promise<string>((resolveUrl, reject) => {
  const lines = createInterface({ input: server.stdout });
  lines.on("line", (line) => {
    const match = /listening on (\S+)/.exec(line);
    if (match?.[1]) resolveUrl(match[1]);
    else serverLog.write(`${line}\n`);
  });
  server.once("exit", (code) => reject(new Error(`rein serve exited with code ${code}`)));
});

if (demo && demoAdmin) {
  // One subscription for the demo's receiver: those of earlier demo runs are replaced (their
  // secrets died with the processes that made them).
  const admin = new ReinClient({ baseUrl: url, token: demoAdmin });
  for (const old of await admin.listWebhooks())
    if (old.url.endsWith("/demo/hook")) await admin.deleteWebhook(old.id);
  const created = await admin.createWebhook({
    url: demo.hookUrl,
    events: [
      "interrupt.pending",
      "interrupt.reminded",
      "interrupt.answered",
      "interrupt.expired",
      "interrupt.escalated",
      "interrupt.cancelled",
      "run.finished",
    ],
  });
  demo.setSecret(created.secret);
}

const client = new ReinClient({ baseUrl: url, ...(requester ? { token: requester.token } : {}) });
const opened: string[] = [];
const reused: string[] = [];
const exists = (threadId: string): Promise<boolean> =>
  client.getThread(threadId).then(
    () => true,
    (error: unknown) => {
      if (error instanceof ReinApiError && error.status === 404) return false;
      throw error;
    },
  );
for (let i = 0; i < Number(values.threads); i++) {
  const threadId = values.more
    ? `ticket-1042-${Date.now().toString(36)}-${i}`
    : `ticket-1042-demo-${i + 1}`;
  if (await exists(threadId)) {
    reused.push(threadId);
    continue;
  }
  await client.createThread({ graph: "support-desk", threadId });
  // The supervisor asks which sub-agents to dispatch; the lead accepts all three, so refund and
  // email pause for approval side by side.
  await client.startRun(threadId, { input: {}, wait: true });
  await client.resume(threadId, { resume: { type: "accept" } });
  opened.push(threadId);
}
if (requester) {
  // The four-eyes ticket: a $1,450 refund waits for two approvers from finance.
  const threadId = "ticket-2077-demo";
  if (await exists(threadId)) reused.push(threadId);
  else {
    await client.createThread({ graph: "support-desk", threadId });
    await client.startRun(threadId, { input: { ticket: largeTicket }, wait: true });
    await client.resume(threadId, { resume: { type: "accept" } });
    opened.push(threadId);
  }
}
/** With `--notify-demo`: a question that goes up its escalation ladder while nobody answers. */
let followUp: string | null = null;
if (demo) {
  followUp = `follow-up-${Date.now().toString(36)}`;
  await client.createThread({ graph: "follow-up", threadId: followUp });
  await client.startRun(followUp, { input: {}, wait: true });
  opened.push(followUp);
}
let waiting = 0;
for (const threadId of [...reused, ...opened])
  waiting += (await client.listInterrupts({ status: "pending", threadId })).items.length;

process.stdout.write(`
Rein is running on the embedded SQLite store (${db})${requester ? `, with the tokens of ${tokensFile}` : ""}.

  Console:   ${url}/
  API:       ${url}/openapi.json
  LangGraph: ${url}/langgraph  (the apiUrl of LangGraph SDK clients and UIs; assistant "support-desk")
  CLI:       npx rein interrupts${values.port === "8080" ? "" : ` --url ${url}`}
  Log:       ${logFile}  (the server's JSON log lines)

Opened ${opened.length} support-desk thread(s)${opened.length ? `: ${opened.join(", ")}` : ""}${reused.length ? `; reused ${reused.join(", ")} (npm start -- --more opens new ones)` : ""}
${waiting} approval(s) are waiting in them (refund and email of each ticket, in parallel).${
  requester
    ? `
The $1,450 refund of ticket-2077-demo needs two approvers from finance, not ${requester.subject}
(who opened it): sign in to the console with alice's and then bob's token from ${tokensFile}.`
    : ""
}${
  demo
    ? `

Notifications (--notify-demo):
  Webhook receiver: ${demo.hookUrl}  (every event, verified with standardwebhooks, printed here)
  SMTP server:      ${demo.smtpUrl}  (each email's subject and links printed here)
  Mailbox page:     ${demo.mailUrl}  (the last 50 emails, with their decision links)
  Notifier config:  ${notifyFile ?? ""}  (people: one per token, <subject>@support-desk.test)
A decision link opens a confirmation page; approving there applies once, as that person.

Escalation ladder: ${followUp ?? ""} asks support "call the customer back?". Leave it
unanswered: after ${ladder.remind} s support is reminded, after ${ladder.escalate} s it is escalated to
finance, after ${ladder.timeout} s it is declined by default — each step a webhook and emails above,
a line in its audit log: ${url}/#/threads/${followUp ?? ""} in the console, or
  REIN_TOKEN=${demoAdmin ?? ""} npx rein audit export --thread ${followUp ?? ""}${values.port === "8080" ? "" : ` --url ${url}`}
and on /metrics (rein_approval_escalations_total, rein_approval_answers_total):
  curl -s -H "authorization: Bearer ${demoAdmin ?? ""}" ${url}/metrics | grep rein_approval`
    : ""
}
Press Ctrl+C to stop.
`);
