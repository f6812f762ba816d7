// The checks scripts/registry-test.sh runs in projects installed from the local registry:
//   node scripts/lib/registry-app.mjs guide DIR    the getting-started guide's files in DIR
//   node scripts/lib/registry-app.mjs starter DIR  an app made by `npm create rein`
// Every process runs in DIR with the project's own node_modules; the page is loaded in Debian's
// Chromium (playwright-core from this repository) and must render, not only answer 200.
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { chromium } from "playwright-core";

const [mode, dir] = process.argv.slice(2);
const exec = promisify(execFile);
const say = (text) => console.log(`[${mode}] ${text}`);
let passed = 0;

/** Fails with what was expected and what came. */
function expect(what, actual, ok) {
  if (!ok) throw new Error(`${what}: got ${JSON.stringify(actual)}`);
  passed += 1;
  say(`ok: ${what}`);
}

async function npx(args, env = {}) {
  const { stdout } = await exec("npx", args, { cwd: dir, env: { ...process.env, ...env } });
  return stdout;
}

/** Starts `command` in its own process group; resolves once it prints `listening on URL`. */
function listen(command, args) {
  const child = spawn(command, args, {
    cwd: dir,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (chunk) => (err += chunk));
  const stop = () => {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  };
  process.on("exit", stop);
  return new Promise((found, fail) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const url = /listening on (\S+)/.exec(out)?.[1];
      if (url) found({ url, stderr: () => err, stop });
    });
    child.on("exit", (code) =>
      fail(new Error(`${command} ${args.join(" ")} exited ${code}:\n${err}`)),
    );
  });
}

/** Loads `/` in Chromium: React must render into #root with no failed request or page error. */
async function consoleRenders(url) {
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox"],
  });
  try {
    const page = await browser.newPage();
    const failures = [];
    page.on("pageerror", (error) => failures.push(error.message));
    page.on("response", (r) => r.status() >= 400 && failures.push(`${r.status()} ${r.url()}`));
    await page.goto(url);
    await page.waitForFunction('document.getElementById("root")?.childElementCount > 0', null, {
      timeout: 15_000,
    });
    expect("the console renders at /", failures, failures.length === 0);
    expect("its title", await page.title(), (await page.title()) === "Rein console");
  } finally {
    await browser.close();
  }
}

/** Calls the API with a token; returns the parsed body. */
async function api(url, token, method, path, body) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: await response.json() };
}

function writeTokens() {
  const token = randomBytes(24).toString("base64url");
  const tokens = [{ token, subject: "rehearsal", tenant: "t", scopes: ["admin"] }];
  writeFileSync(join(dir, "tokens.json"), JSON.stringify({ tokens }));
  return token;
}

async function guide() {
  const paused = await npx(["tsx", "pause.ts"]);
  expect(
    "pause.ts stops at the question",
    paused,
    paused === "interrupted { question: 'Publish the draft?' }\n",
  );
  const done = await npx(["tsx", "resume.ts"]);
  expect(
    "resume.ts, another process, finishes it",
    done,
    done === "done [ 'draft about durable agents', 'published' ]\n",
  );

  const token = writeTokens();
  const server = await listen("npx", [
    "rein",
    "serve",
    "--graphs",
    "./agent.ts",
    "--tokens",
    "tokens.json",
    "--port",
    "0",
    "--log-level",
    "silent",
  ]);
  try {
    // The console line follows the listening line, on the other stream.
    const named = () => server.stderr().includes(`approval console at ${server.url}/`);
    for (let i = 0; i < 50 && !named(); i++) await new Promise((r) => setTimeout(r, 100));
    expect("rein serve names the console", server.stderr(), named());
    await consoleRenders(server.url);
    const refused = await api(server.url, "not-a-token-0000000000", "GET", "/threads");
    expect("the API refuses a wrong token", refused.status, refused.status === 401);
    const ready = await fetch(`${server.url}/readyz`);
    expect("GET /readyz answers ready", ready.status, ready.status === 200);
    // The LangGraph-protocol layer is on by default: a LangGraph client's first calls.
    const info = await fetch(`${server.url}/langgraph/info`, { headers: { "x-api-key": token } });
    expect("the LangGraph-protocol layer serves /langgraph/info", info.status, info.status === 200);
    const lgThread = await fetch(`${server.url}/langgraph/threads`, {
      method: "POST",
      headers: { "x-api-key": token, "content-type": "application/json" },
      body: "{}",
    });
    const lgBody = await lgThread.json();
    expect(
      "POST /langgraph/threads creates a thread in LangGraph's shape",
      lgBody,
      lgThread.status === 200 && typeof lgBody.thread_id === "string",
    );
    const env = { REIN_URL: server.url, REIN_TOKEN: token };
    const client = await npx(["tsx", "client.ts"], env);
    expect(
      "client.ts: asked once, the edited call ran",
      client,
      client === "interrupted 1 approval asked\ndone Done: refunded $40 on order 1042\n",
    );
    const input = JSON.stringify({
      messages: [{ role: "user", content: "Order 7 arrived broken." }],
    });
    const started = JSON.parse(
      await npx(["rein", "start", "support", "--thread", "cli-1", "--input", input, "--json"], env),
    );
    expect("rein start pauses on the approval", started.status, started.status === "interrupted");
    const queue = JSON.parse(await npx(["rein", "interrupts", "--thread", "cli-1", "--json"], env));
    expect("rein interrupts lists it", queue.items?.length, queue.items?.length === 1);
    const resumed = JSON.parse(
      await npx(["rein", "resume", "cli-1", "--value", '{"type":"accept"}', "--json"], env),
    );
    expect("rein resume finishes the run", resumed.status, resumed.status === "done");
    await identity(server.url, env);
  } finally {
    server.stop();
  }
}

/**
 * The identity surface of the installed server: `GET /auth/config` (no issuer here, so no single
 * sign-on), and an API key made, used, listed and revoked with `rein keys`.
 */
async function identity(url, env) {
  const config = await (await fetch(`${url}/auth/config`)).json();
  expect("GET /auth/config offers no issuer", config, config.oidc === null);
  const created = await npx(
    ["rein", "keys", "create", "--name", "rehearsal", "--scopes", "read"],
    env,
  );
  const key = /rein_[A-Za-z0-9]+_\S+/.exec(created)?.[0];
  const id = key?.split("_").slice(0, 2).join("_");
  expect("rein keys create shows the key once", created, key !== undefined);
  const me = await api(url, key, "GET", "/whoami");
  expect("the key acts as key:<id>", me.body, me.body.subject === `key:${id}`);
  const listed = await npx(["rein", "keys", "list"], env);
  expect("rein keys list names it, active", listed, new RegExp(`${id}\\s.*active`).test(listed));
  await npx(["rein", "keys", "revoke", id], env);
  const refused = await api(url, key, "GET", "/whoami");
  expect(
    "after rein keys revoke the key is refused",
    refused.body,
    refused.body.error === "key_revoked",
  );
}

async function starter() {
  const { tokens } = JSON.parse(readFileSync(join(dir, "tokens.json"), "utf8"));
  const token = tokens[0].token;
  const server = await listen("npm", ["start", "--", "--port", "0", "--log-level", "silent"]);
  try {
    await consoleRenders(server.url);
    const { body: thread } = await api(server.url, token, "POST", "/threads", { graph: "support" });
    const input = { messages: [{ role: "user", content: "Order 1042 arrived broken." }] };
    const asked = await api(server.url, token, "POST", `/threads/${thread.threadId}/runs`, {
      input,
      wait: true,
    });
    expect(
      "the starter's agent asks for approval",
      asked.body.status,
      asked.body.status === "interrupted",
    );
    const done = await api(server.url, token, "POST", `/threads/${thread.threadId}/resume`, {
      resume: { type: "accept" },
    });
    const last = done.body.values?.messages?.at(-1)?.content;
    expect(
      "and refunds on accept",
      last,
      done.body.status === "done" && /refunded \$80/.test(String(last)),
    );
  } finally {
    server.stop();
  }
}

await (mode === "guide" ? guide() : starter());
// The shell script adds up the checks of both projects for its closing line.
if (process.env["REIN_REGISTRY_CHECKS"])
  appendFileSync(process.env["REIN_REGISTRY_CHECKS"], `${passed}\n`);
