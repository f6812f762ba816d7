/**
 * The graph module `rein serve --graphs` loads for the demo: `support-desk` on the server's store,
 * its ledger and outbox under `REIN_DESK_DATA` (default `.rein/support-desk`), and `follow-up`,
 * a question that goes up an escalation ladder.
 */
import type { Checkpointer } from "@rein/core";
import { closeMailServers } from "./agents.ts";
import { createFollowUp } from "./follow-up.ts";
import { createSupportDesk } from "./support-desk.ts";

/** Where the demo's payment ledger and email outbox go. */
export const deskDataDir = process.env["REIN_DESK_DATA"] ?? ".rein/support-desk";

/** Graphs by name, as `rein serve --graphs` expects them. */
export const graphs = {
  "support-desk": (store: Checkpointer) => createSupportDesk({ store, dataDir: deskDataDir }),
  /** A question with an escalation ladder (`npm start -- --notify-demo` opens one). */
  "follow-up": (store: Checkpointer) => createFollowUp(store),
};

/**
 * The close hook `rein serve` and `rein worker` await on shutdown: the desk's MCP mail server is a
 * child process, which would otherwise keep the stopped server alive.
 */
export const close = closeMailServers;
