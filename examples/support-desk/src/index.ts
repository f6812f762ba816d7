/**
 * `@rein/example-support-desk` — SPEC §9's demo as a library: {@link createSupportDesk} builds
 * the compiled `support-desk` graph on any store, so a server can register it and start runs
 * with input `{}` on the sample ticket; {@link runWalkthrough} is the terminal walk-through.
 *
 * @packageDocumentation
 */
export { createSupportDesk, deskSchema, dispatchAnswer, subAgents } from "./support-desk.ts";
export type { SubAgentName, SupportDeskOptions } from "./support-desk.ts";
export { closeMailServers, mailTools } from "./agents.ts";
export { DeskFiles, orders, policy, sampleTicket } from "./desk-data.ts";
export type { LedgerEntry, Ticket } from "./desk-data.ts";
export { interruptTable, table } from "./table.ts";
export { pendingOf, printOutcome, runWalkthrough, targetOf } from "./walkthrough.ts";
export type { WalkthroughOptions, WalkthroughResult } from "./walkthrough.ts";
export { runInteractive } from "./interactive.ts";
export { scripted } from "./scripted.ts";
export type { PromptView, ScriptedAnswer } from "./scripted.ts";
