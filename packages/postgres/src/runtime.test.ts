import { describe } from "vitest";
import { runRuntimeContracts } from "@rein/core/testing/runtime";
import type { PostgresSaver } from "./saver.ts";
import { createTestSaver, destroyTestSaver, probePostgres, redactUrl } from "./testing.ts";

const probe = await probePostgres();

describe.skipIf(!probe.available)(`postgres at ${redactUrl(probe.url)}`, () => {
  runRuntimeContracts({
    name: "postgres",
    create: () => createTestSaver(probe.url),
    destroy: (saver) => destroyTestSaver(saver as PostgresSaver),
  });
});
