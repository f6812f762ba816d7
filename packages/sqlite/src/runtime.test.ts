import { rmSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runRuntimeContracts } from "@rein/core/testing/runtime";
import { SqliteSaver } from "./saver.ts";

// A file per test (WAL mode, as in production) rather than ":memory:".
const files = new WeakMap<object, string>();
runRuntimeContracts({
  name: "sqlite",
  create: () => {
    const dir = mkdtempSync(join(tmpdir(), "rein-rt-"));
    const saver = new SqliteSaver({ path: join(dir, "rein.db") });
    files.set(saver, dir);
    return Promise.resolve(saver);
  },
  destroy: async (saver) => {
    await saver.close();
    const dir = files.get(saver);
    if (dir) rmSync(dir, { recursive: true, force: true });
  },
});
