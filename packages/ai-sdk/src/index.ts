/**
 * `@rein/ai-sdk` — the Vercel AI SDK as a Rein model.
 *
 * `fromAiSdk(languageModel)` turns any AI SDK language model into the `model` of `agent()`: the
 * conversation goes in as `ModelMessage`s, the tools as JSON Schemas without `execute` (Rein
 * runs them, with approvals), the run's abort signal as `abortSignal`; text, reasoning, tool
 * calls, usage and the response id come back. `{ stream: true }` streams tokens to the
 * `messages` stream mode.
 *
 * @packageDocumentation
 */
export { fromAiSdk } from "./model.ts";
export type { AiSdkModelOptions } from "./model.ts";
export { fromGeneration, fromUsage, toModelMessages } from "./convert.ts";
export { fromAiSdkTools } from "./tools.ts";
export type { AiSdkToolsOptions } from "./tools.ts";
