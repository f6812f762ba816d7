/**
 * `npm run demo` (and `npm start`): the support desk, end to end, in the terminal. Runs are
 * stored in `.rein/support-desk/support-desk.db`; the ledger and outbox sit beside it.
 * `--interactive` lets a person answer; `--data <dir>` picks another folder.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SqliteSaver } from "@rein/sqlite";
import { closeMailServers } from "./agents.ts";
import { runInteractive } from "./interactive.ts";
import { runWalkthrough } from "./walkthrough.ts";

const { values: flags } = parseArgs({
  options: {
    interactive: { type: "boolean", default: false },
    data: { type: "string", default: ".rein/support-desk" },
  },
});
const dataDir = flags.data;
const store = SqliteSaver.open(join(dataDir, "support-desk.db"));
const threadId = `ticket-1042-${Date.now()}`;
try {
  if (flags.interactive) await runInteractive({ store, dataDir, threadId });
  else await runWalkthrough({ store, dataDir, threadId, print: (t) => console.log(t) });
} finally {
  await closeMailServers();
  await store.close();
}
