import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type * as core from "./index.ts";
import type * as store from "./store.ts";

// Store-only records live in `@rein/core/store`; the app-facing index keeps the store type and
// the records its public getters return. Checked by the compiler (`tsc -b`).
export type AppFacing = [core.Checkpointer, core.RunRecord, core.ThreadRecord, store.StepCommit];
// @ts-expect-error StepCommit is store-only.
export type StoreOnlyStepCommit = core.StepCommit;
// @ts-expect-error StoredInterrupt is store-only.
export type StoreOnlyStoredInterrupt = core.StoredInterrupt;

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const packages = readdirSync(join(root, "packages"))
  .map((name) => join(root, "packages", name))
  .filter((dir) => existsSync(join(dir, "package.json")));

/** One entry of an export map: the conditions docs/packaging.md prescribes, in that order. */
type Conditions = Record<string, string>;

describe("package export maps", () => {
  for (const dir of packages) {
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      name: string;
      private?: boolean;
      exports?: Record<string, string | Conditions>;
    };
    // A private package (the console's web app) is never installed from a registry.
    if (manifest.private) continue;
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (subpath === "./package.json") continue;
      it(`${manifest.name} "${subpath}" maps the source and its build, and the source loads`, async () => {
        expect(typeof target).toBe("object");
        const conditions = target as Conditions;
        // "@rein/source" must come first: resolvers take the first condition they know.
        expect(Object.keys(conditions)).toEqual(["@rein/source", "types", "import", "default"]);
        const source = conditions["@rein/source"] ?? "";
        expect(source).toMatch(/^\.\/src\/.+\.ts$/);
        const built = source.replace(/^\.\/src\//, "./dist/").replace(/\.ts$/, "");
        expect(conditions).toMatchObject({
          types: `${built}.d.ts`,
          import: `${built}.js`,
          default: `${built}.js`,
        });
        expect(existsSync(join(dir, source))).toBe(true);
        // Runtime-only entry points; the testing entries register vitest suites, so load only the rest.
        if (subpath.startsWith("./testing")) return;
        const loaded = (await import(join(dir, source))) as Record<string, unknown>;
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
      "agent",
      "toolNode",
      "tool",
      "toolSpecs",
      "subAgent",
      "lastAssistantText",
      "callModel",
      "modelView",
      "steeringMessages",
    ])
      expect(core[name], name).toBeDefined();
  });

  it("the store entry point exports what a store author needs", async () => {
    const store = (await import("./store.ts")) as Record<string, unknown>;
    for (const name of [
      "planAnswerBatch",
      "answerTargets",
      "keysetPage",
      "keysetSlice",
      "pageLimit",
      "encodeCursor",
      "decodeCursor",
      "decodeSeqCursor",
      "channelValuesFromChains",
      "rebuildChannelValue",
      "checkFence",
      "conflictError",
      "settle",
      "validateThreadId",
    ])
      expect(store[name], name).toBeDefined();
  });
});
