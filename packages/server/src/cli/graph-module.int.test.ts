/**
 * `--graphs` modules written in TypeScript, as a user writes them next to their package.json:
 * syntax Node's type stripping refuses (an enum, an extensionless relative import) loads, and a
 * module that fails to load ends `rein serve` and `rein worker` with one line naming the file and
 * the cause, exit code 2, no stack.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ReinClient } from "@rein/client";
import { afterAll, describe, expect, it } from "vitest";

const BIN = resolve(import.meta.dirname, "../../bin/rein.mjs");
const dir = mkdtempSync(join(tmpdir(), "rein-graph-module-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
// The module imports @rein/core as a user's would, from the project's node_modules.
symlinkSync(resolve(import.meta.dirname, "../../../../node_modules"), join(dir, "node_modules"));
writeFileSync(join(dir, "names.ts"), 'export const prefix: string = "kind";\n');
writeFileSync(
  join(dir, "graphs.ts"),
  `import { END, START, StateGraph, lastValue, type Checkpointer } from "@rein/core";
import { prefix } from "./names";

enum Kind { Echo = "echo" }

export const graphs = {
  [\`\${prefix}-\${Kind.Echo}\`]: (store: Checkpointer) =>
    new StateGraph({ text: lastValue<string>(() => "") })
      .addNode("echo", (s) => ({ text: s.text }))
      .addEdge(START, "echo")
      .addEdge("echo", END)
      .compile({ checkpointer: store }),
};
`,
);
writeFileSync(join(dir, "broken.ts"), "export const graphs = {\n  oops: (store: any) => ,\n};\n");
writeFileSync(join(dir, "throws.ts"), 'throw new Error("no API key\\n    at setup (x.ts:1)");\n');

interface Outcome {
  code: number;
  stderr: string;
}

function rein(args: string[]): Promise<Outcome> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd: dir, timeout: 30_000 }, (error, _, stderr) =>
      done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stderr }),
    );
  });
}

/** The lines of stderr that are not the open-mode warning. */
function errorLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => line !== "" && !line.startsWith("WARNING: open mode"));
}

const SERVE = ["serve", "--open", "--port", "0", "--log-level", "silent", "--db", "rein.db"];
const WORKER = ["worker", "--postgres", "postgres://127.0.0.1:1/none"];

describe("a TypeScript --graphs module", { timeout: 60_000 }, () => {
  it("is served as written: an enum and an extensionless import load", async () => {
    const child = spawn(process.execPath, [BIN, ...SERVE, "--graphs", "./graphs.ts"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    try {
      const url = await new Promise<string>((found, fail) => {
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const match = /listening on (\S+)/.exec(out);
          if (match?.[1]) found(match[1]);
        });
        child.on("exit", (code) => fail(new Error(`rein serve exited ${code}: ${err}`)));
      });
      expect(err).toContain("graphs: kind-echo");
      const rein = new ReinClient({ baseUrl: url });
      const { threadId } = await rein.createThread({ graph: "kind-echo" });
      const result = await rein.startRun(threadId, { input: { text: "hi" }, wait: true });
      expect(result).toMatchObject({ status: "done", values: { text: "hi" } });
    } finally {
      child.kill("SIGKILL");
    }
  });

  for (const [command, args] of [
    ["serve", SERVE],
    ["worker", WORKER],
  ] as const) {
    it(`that does not compile stops rein ${command} with one line: the file, where, what`, async () => {
      const { code, stderr } = await rein([...args, "--graphs", "./broken.ts"]);
      expect(code).toBe(2);
      expect(errorLines(stderr)).toEqual([
        expect.stringMatching(
          /^rein: invalid_input: Could not load \.\/broken\.ts: .*broken\.ts:2:\d+: .*Unexpected/,
        ),
      ]);
    });

    it(`that throws while loading stops rein ${command} with one line and no stack`, async () => {
      const { code, stderr } = await rein([...args, "--graphs", "./throws.ts"]);
      expect(code).toBe(2);
      expect(errorLines(stderr)).toEqual([
        "rein: invalid_input: Could not load ./throws.ts: Error: no API key",
      ]);
    });
  }

  it("that is not there is named with the path looked at", async () => {
    const { code, stderr } = await rein([...SERVE, "--graphs", "./graph.ts"]);
    expect(code).toBe(2);
    expect(errorLines(stderr)).toEqual([
      `rein: invalid_input: No module at ./graph.ts (looked for ${join(dir, "graph.ts")}).`,
    ]);
  });
});
