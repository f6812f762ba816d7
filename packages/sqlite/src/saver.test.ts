import { runCheckpointerConformance, runWebhookConformance } from "@rein/core/testing";
import { SqliteSaver } from "./saver.ts";
import { SqliteWebhooks } from "./webhooks.ts";

const create = (clock: () => Date) => Promise.resolve(new SqliteSaver({ path: ":memory:", clock }));
runCheckpointerConformance({
  name: "sqlite",
  create,
  honoursClock: true,
  destroy: (saver) => saver.close(),
});

runWebhookConformance({
  name: "sqlite",
  create: () => {
    const saver = new SqliteSaver({ path: ":memory:" });
    return Promise.resolve({ saver, webhooks: new SqliteWebhooks(saver) });
  },
  destroy: (saver) => saver.close(),
});
