/**
 * The docs' code is real: every ```ts block in docs (the task guides and the concept pages) is,
 * word for word, a file of this folder (named on the line above the block), `tsc -b`
 * type-checks those files, and the tests below run each one as a user would and check what it
 * prints.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { PostgresSaver } from "@rein/postgres";
import { createServer, openAuth } from "@rein/server";
import { SqliteSaver } from "@rein/sqlite";
import { graphs } from "./concepts/server-graphs.ts";
import { startReceiver, type ReinEvent } from "./concepts/webhook-receiver.ts";
import { graphs as agentGraphs } from "./getting-started/agent.ts";
import {
  destroyTestSaver,
  postgresRequired,
  postgresTestUrl,
  probePostgres,
  testSchemaName,
} from "@rein/postgres/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it } from "vitest";

const exec = promisify(execFile);
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const docs = fileURLToPath(new URL("../../../docs", import.meta.url));
const guides = join(docs, "guides");
const cwd = mkdtempSync(join(tmpdir(), "rein-guides-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** Runs `src/<name>.ts` in a scratch folder (its database lands there); returns its stdout. */
async function run(name: string, env: Record<string, string> = {}): Promise<string> {
  const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  const { stdout } = await exec(process.execPath, ["--import", tsx, file], {
    cwd,
    env: { ...process.env, ...env },
  });
  return stdout;
}

describe("docs/guides", () => {
  const pages = readdirSync(guides).filter((f) => f.endsWith(".md"));

  it("has the task guides", () => {
    expect(pages.sort()).toEqual([
      "deploying.md",
      "from-langgraph.md",
      "getting-started.md",
      "postgres.md",
      "reading-state.md",
      "streaming.md",
      "tool-approvals.md",
    ]);
  });
});

describe("docs", () => {
  const pages = readdirSync(docs, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .sort();

  it("shows TypeScript only in ```ts blocks (so the check below sees every snippet)", () => {
    for (const page of pages) {
      const markdown = readFileSync(join(docs, page), "utf8");
      const fences = [...markdown.matchAll(/^[ \t]*```[ \t]*([\w-]*)/gm)].map((m) => m[1]);
      const other = fences.filter((lang) =>
        /^(typescript|tsx?|mts|cts|js|jsx|javascript)$/.test(lang!),
      );
      expect(
        other.filter((lang) => lang !== "ts"),
        page,
      ).toEqual([]);
      const indented = [...markdown.matchAll(/^[ \t]+```ts/gm)];
      expect(indented, `${page}: an indented \`\`\`ts block escapes the file check`).toEqual([]);
    }
  });

  for (const page of pages) {
    it(`${page}: every TypeScript block is an example file, word for word`, () => {
      const markdown = readFileSync(join(docs, page), "utf8");
      const blocks = [...markdown.matchAll(/(?:<!-- file: (\S+) -->\n\n)?```ts\n([\s\S]*?)```/g)];
      for (const [, file, code] of blocks) {
        expect(file, `a \`\`\`ts block in ${page} names no file`).toBeDefined();
        // Only this folder's files are type-checked (tsc -b) and run (below).
        expect(file, page).toMatch(/^examples\/guides\/src\/[\w/-]+\.ts$/);
        const path = fileURLToPath(new URL(`../../../${file}`, import.meta.url));
        expect(code, `${page} ↔ ${file}`).toBe(readFileSync(path, "utf8"));
      }
    });
  }
});

describe("the guides' examples", () => {
  it("getting-started pauses in one process and publishes on the answer given in another", async () => {
    expect(await run("getting-started/pause")).toBe(
      "interrupted { question: 'Publish the draft?' }\n",
    );
    expect(await run("getting-started/resume")).toBe(
      "done [ 'draft about durable agents', 'published' ]\n",
    );
  });

  it("getting-started serves the agent; the client's edit with steering runs once, asked once", async () => {
    const store = SqliteSaver.open(join(cwd, "agent.db"));
    const server = await createServer({ store, graphs: agentGraphs, auth: openAuth() });
    try {
      const url = await server.listen({ port: 0, host: "127.0.0.1" });
      // A model that keyed on the last message would call the tool again after the steering
      // note: the run would stop "interrupted" on a second approval instead of "done".
      expect(await run("getting-started/client", { REIN_URL: url })).toBe(
        "interrupted 1 approval asked\ndone Done: refunded $40 on order 1042\n",
      );
    } finally {
      await server.close();
      await store.close();
    }
  });

  it("from-langgraph pauses once and takes the answer", async () => {
    expect(await run("from-langgraph")).toBe("interrupted 1\npro\n");
  });

  it("from-langgraph's agent asks before its tool and runs it on the answer", async () => {
    expect(await run("from-langgraph-agent")).toBe(
      "interrupted issue_refund\ndone Done: refunded $80 on order 1042\n",
    );
  });

  it("reading-state shows the state, the history newest first and the audit log", async () => {
    const out = await run("reading-state");
    expect(out).toContain("now: [ 'planned' ] next: [ 'approve' ] pending: 1\n");
    const steps = [...out.matchAll(/^step (\d+) /gm)].map((m) => Number(m[1]));
    expect(steps.length).toBeGreaterThan(1);
    expect(steps).toEqual([...steps].sort((a, b) => b - a));
    expect(out).toMatch(/step \d+ \(loop\): \[ 'planned', 'approved' \]/);
    expect(out).toContain("audit: answer by alice@example.com\n");
  });

  it("streaming yields custom events, then each node's update, then the end", async () => {
    expect(await run("streaming")).toBe(
      'custom: {"token":"durable"}\n' +
        'custom: {"token":"graphs"}\n' +
        "update from write: { words: [ 'durable', 'graphs' ] }\n" +
        "update from sign: { words: '— rein' }\n" +
        "end: done\n",
    );
  });

  it("tool-approvals runs the edited call once, with the edited arguments", async () => {
    const out = await run("tool-approvals");
    expect(out).toMatch(
      /^approval asked: \{"action":"refund","args":\{"order":"1042","amount":80\}/,
    );
    expect(out).toContain("Done: refunded $50 on order 1042\n");
    expect(out).toContain("payments made: 1\n");
  });

  it("deploying starts the deadline timer, pauses a run and shuts down cleanly", async () => {
    expect(await run("deploying", { REIN_DB: join(cwd, "deploy.db") })).toBe(
      "interrupted\nclosed\n",
    );
  });

  it("postgres migrates its schema and runs a graph on it", async (context) => {
    const probe = await probePostgres();
    if (!probe.available && !postgresRequired()) return context.skip(probe.reason ?? undefined);
    const schema = testSchemaName();
    try {
      expect(await run("postgres", { DATABASE_URL: postgresTestUrl(), REIN_SCHEMA: schema })).toBe(
        "done 42\n",
      );
    } finally {
      const saver = new PostgresSaver({ connectionString: postgresTestUrl(), schema });
      await destroyTestSaver(saver);
    }
  });
});

describe("the concept pages' examples", () => {
  it("agents.md: a tool is handed to the model as its JSON Schema and runs with a key", async () => {
    expect(await run("concepts/agents-tool")).toBe(
      "issue_refund takes [ 'orderId', 'amount', 'reason' ]\n" +
        "refunded $12 on order 1042, key sent\n",
    );
  });

  it("agents.md: steering reaches the model as a marked user message after the tool result", async () => {
    expect(await run("concepts/agents-steering")).toBe(
      "[Steering from alice@example.com] Pro rata: only one mug broke. alice@example.com\n" +
        "noted: [Steering from alice@example.com] Pro rata: only one mug broke.\n",
    );
  });

  it("agents.md: a sub-agent's parent receives only the declared output", async () => {
    expect(await run("concepts/agents-sub-agent")).toBe(
      "[ 'ticket', 'refundReport' ] → Refund agent read 1 message(s): refunding the broken mug.\n",
    );
  });

  it("agents.md: an AI SDK tool with needsApproval pauses, and execute runs once with the edit", async () => {
    expect(await run("concepts/agents-ai-sdk-tool")).toBe(
      "interrupted send_email\nsent to dana@example.com: Sorry, your refund is on its way.\n",
    );
  });

  it("agents.md: an MCP server's destructive tool pauses, and the edited call runs once in the server", async () => {
    const file = fileURLToPath(new URL("./concepts/agents-mcp.ts", import.meta.url));
    const { stdout, stderr } = await exec(process.execPath, ["--import", tsx, file], { cwd });
    expect(stdout).toBe(
      'tools: lookup_ticket, delete_ticket\ninterrupted {"id":"T-1"}\ndeleted T-2\n',
    );
    // The server process says so each time it deletes: once, the reviewer's ticket.
    expect(stderr.match(/server: deleted \S+/g)).toEqual(["server: deleted T-2"]);
  });

  it("agents.md: an MCP server's input_required pauses the call, and the answer goes back on the next call", async () => {
    const file = fileURLToPath(new URL("./concepts/agents-mcp-input.ts", import.meta.url));
    const { stdout, stderr } = await exec(process.execPath, ["--import", tsx, file], { cwd });
    expect(stdout).toBe("interrupted Refund $25 on 1042?\nrefunded 1042\n");
    expect(stderr.match(/server: refunded \S+/g)).toEqual(["server: refunded 1042"]);
  });

  it("agents.md: a graph served as an MCP tool answers input_required, and the call with the answer resumes it once", async () => {
    const file = fileURLToPath(new URL("./concepts/agents-mcp-graph.ts", import.meta.url));
    const { stdout, stderr } = await exec(process.execPath, ["--import", tsx, file], { cwd });
    expect(stdout).toBe("input_required Refund order 1042?\nrefunded 1042\n");
    expect(stderr.match(/server: refunded \S+/g)).toEqual(["server: refunded 1042"]);
  });

  it("agents.md: a graph served over HTTP answers as the token's subject: the requester is refused, the named approver pays", async () => {
    expect(await run("concepts/agents-mcp-graph-caller")).toBe(
      "clerk: The person who started this run may not approve it (four eyes): ask someone else. (not_allowed); nothing was changed.\n" +
        'lead: {"vendor":"Acme","outcome":"paid Acme"}\n',
    );
  });

  it("governance.md: the second distinct finance approval applies; a repeat is refused", async () => {
    expect(await run("concepts/governance-four-eyes")).toBe(
      "interrupted 1 of 2\nalready_approved\ndone\n",
    );
  });

  it("governance.md: one bulk decision answers three threads; each run then finishes", async () => {
    expect(await run("concepts/governance-bulk")).toBe(
      "[ 'answered', 'answered', 'answered' ]\ndone\ndone\ndone\n",
    );
  });

  it("audit.md: the chain verifies and signs its head; a hand edit is named; the rule re-computes", async () => {
    expect(await run("concepts/audit")).toBe(
      "verified: true checked: 1 signed: 1\nsame hash: true\nhash_mismatch at entry 1\n",
    );
  });

  it("tool-approvals.md: the edited call runs once, with the edited arguments", async () => {
    expect(await run("concepts/tool-approvals")).toBe("paid $25 | payments: [ 25 ]\n");
  });

  it("the escalation ladder refuses a manager before the escalation and admits one after it", async () => {
    expect(await run("concepts/escalation-ladder")).toBe(
      "none\nnot_listed\nescalated [ 'support', 'managers' ]\napprove\n",
    );
  });

  it("targeted-resume.md: resuming one child leaves its paused siblings as they were", async () => {
    expect(await run("concepts/targeted-resume")).toBe(
      "pending: [ 'research', 'research', 'research' ]\n" +
        "still pending: [ 'pricing', 'shipping' ]\n",
    );
  });

  it("server.md: the graphs module serves, and the client runs, answers and watches the queue", async () => {
    const store = SqliteSaver.open(join(cwd, "server.db"));
    const server = await createServer({ store, graphs, auth: openAuth() });
    try {
      const url = await server.listen({ port: 0, host: "127.0.0.1" });
      expect(await run("concepts/server-client", { REIN_URL: url })).toBe(
        "resumed: done { status: 'closed (accept)' }\npending now: 0\n",
      );
    } finally {
      await server.close();
      await store.close();
    }
  });

  it("webhooks.md: the receiver handles a signed event once per id and refuses a forged one", async () => {
    const secret = `whsec_${Buffer.from("0123456789abcdef01234567").toString("base64")}`;
    const events: ReinEvent[] = [];
    const receiver = startReceiver(secret, (event) => events.push(event));
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
    const { port } = receiver.address() as AddressInfo;
    const body = JSON.stringify({
      type: "interrupt.pending",
      timestamp: new Date().toISOString(),
      data: { threadId: "t-1", runId: "r-1", interruptId: "i-1" },
    });
    // One timestamp for the header and the signature: two clock reads could straddle a second.
    const sentAt = new Date();
    const post = (signature: string): Promise<number> =>
      fetch(`http://127.0.0.1:${port}/`, {
        method: "POST",
        body,
        headers: {
          "webhook-id": "msg_1",
          "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
          "webhook-signature": signature,
        },
      }).then((r) => r.status);
    try {
      const signature = new Webhook(secret).sign("msg_1", sentAt, body);
      expect(await post(signature)).toBe(204);
      expect(await post(signature)).toBe(204);
      expect(await post("v1,Zm9yZ2Vk")).toBe(400);
      expect(events.map((e) => [e.type, e.data.interruptId])).toEqual([
        ["interrupt.pending", "i-1"],
      ]);
    } finally {
      receiver.close();
    }
  });
});
