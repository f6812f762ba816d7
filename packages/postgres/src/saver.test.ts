import { describe } from "vitest";
import { runCheckpointerConformance, runWebhookConformance } from "@rein/core/testing";
import type { PostgresSaver } from "./saver.ts";
import { createTestSaver, destroyTestSaver, probePostgres, redactUrl } from "./testing.ts";
import { PostgresWebhooks } from "./webhooks.ts";

const probe = await probePostgres();

describe.skipIf(!probe.available)(`postgres at ${redactUrl(probe.url)}`, () => {
  runCheckpointerConformance({
    name: "postgres",
    create: () => createTestSaver(probe.url),
    destroy: (saver) => destroyTestSaver(saver as PostgresSaver),
  });

  runWebhookConformance({
    name: "postgres",
    create: async () => {
      const saver = await createTestSaver(probe.url);
      return { saver, webhooks: new PostgresWebhooks(saver) };
    },
    destroy: (saver) => destroyTestSaver(saver as PostgresSaver),
  });
});
