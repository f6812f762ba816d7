import { runCheckpointerConformance, runWebhookConformance } from "../testing/index.ts";
import { MemorySaver } from "./memory.ts";

const create = () => Promise.resolve(new MemorySaver());
runCheckpointerConformance({ name: "memory", create, destroy: (saver) => saver.close() });

runWebhookConformance({
  name: "memory",
  create: () => {
    const saver = new MemorySaver();
    return Promise.resolve({ saver, webhooks: saver.webhooks });
  },
  destroy: (saver) => saver.close(),
});
