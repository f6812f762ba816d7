import { runCheckpointerConformance, runWebhookConformance } from "@rein/core/testing";
import { SqliteSaver } from "./saver.ts";
import { SqliteWebhooks } from "./webhooks.ts";

const create = () => Promise.resolve(new SqliteSaver({ path: ":memory:" }));
runCheckpointerConformance({ name: "sqlite", create, destroy: (saver) => saver.close() });

runWebhookConformance({
  name: "sqlite",
  create: () => {
    const saver = new SqliteSaver({ path: ":memory:" });
    return Promise.resolve({ saver, webhooks: new SqliteWebhooks(saver) });
  },
  destroy: (saver) => saver.close(),
});
