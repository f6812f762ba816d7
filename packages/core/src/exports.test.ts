import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const packages = readdirSync(join(root, "packages"))
  .map((name) => join(root, "packages", name))
  .filter((dir) => existsSync(join(dir, "package.json")));

describe("package export maps", () => {
  for (const dir of packages) {
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      name: string;
      exports?: Record<string, string>;
    };
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      it(`${manifest.name} "${subpath}" points at a module that loads`, async () => {
        expect(existsSync(join(dir, target))).toBe(true);
        // Runtime-only entry points; the testing entries register vitest suites, so load only the rest.
        if (subpath.startsWith("./testing")) return;
        const loaded = (await import(join(dir, target))) as Record<string, unknown>;
        expect(Object.keys(loaded).length).toBeGreaterThan(0);
      });
    }
  }

  it("the core entry point exports the public API without clashes", async () => {
    const core = (await import("./index.ts")) as Record<string, unknown>;
    for (const name of [
      "StateGraph",
      "START",
      "END",
      "Command",
      "Send",
      "MemorySaver",
      "RunConfig",
      "interrupt",
      "lastValue",
      "append",
      "reducer",
      "ephemeral",
      "ReinError",
      "StaleTargetError",
      "AmbiguousResumeError",
      "ThreadInterruptedError",
      "MissingCheckpointerError",
      "MissingThreadIdError",
      "NonSerializableError",
      "SerializationDepthError",
      "InvalidIdError",
      "ErrorCodes",
      "defineInterrupt",
      "validateThreadId",
    ])
      expect(core[name], name).toBeDefined();
  });
});
