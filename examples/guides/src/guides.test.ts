/**
 * The guides' code is real: every ```ts block in docs/guides is, word for word, a file of this
 * folder (named on the line above the block), `tsc -b` type-checks those files, and the tests
 * below run each one as a user would and check what it prints.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { PostgresSaver } from "@rein/postgres";
import {
  destroyTestSaver,
  postgresRequired,
  postgresTestUrl,
  probePostgres,
  testSchemaName,
} from "@rein/postgres/testing";
import { afterAll, describe, expect, it } from "vitest";

const exec = promisify(execFile);
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const guides = fileURLToPath(new URL("../../../docs/guides", import.meta.url));
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

  for (const page of pages) {
    it(`${page}: every TypeScript block is an example file, word for word`, () => {
      const markdown = readFileSync(join(guides, page), "utf8");
      const blocks = [...markdown.matchAll(/(?:<!-- file: (\S+) -->\n\n)?```ts\n([\s\S]*?)```/g)];
      for (const [, file, code] of blocks) {
        expect(file, `a \`\`\`ts block in ${page} names no file`).toBeDefined();
        const path = fileURLToPath(new URL(`../../../${file}`, import.meta.url));
        expect(code, `${page} ↔ ${file}`).toBe(readFileSync(path, "utf8"));
      }
    });
  }
});

describe("the guides' examples", () => {
  it("getting-started pauses for a person and publishes on the answer", async () => {
    expect(await run("getting-started")).toBe(
      "interrupted { question: 'Publish the draft?' }\n" +
        "done [ 'draft about durable agents', 'published' ]\n",
    );
  });

  it("from-langgraph pauses once and takes the answer", async () => {
    expect(await run("from-langgraph")).toBe("interrupted 1\npro\n");
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
