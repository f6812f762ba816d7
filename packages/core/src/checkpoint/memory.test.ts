import { runCheckpointerConformance, runWebhookConformance } from "../testing/index.ts";
import { MemorySaver } from "./memory.ts";

const create = (clock: () => Date) => Promise.resolve(new MemorySaver({ clock }));
runCheckpointerConformance({
  name: "memory",
  create,
  honoursClock: true,
  destroy: (saver) => saver.close(),
});

runWebhookConformance({
  name: "memory",
  create: () => {
    const saver = new MemorySaver();
    return Promise.resolve({ saver, webhooks: saver.webhooks });
  },
  destroy: (saver) => saver.close(),
});
