/**
 * `@rein/openai` — the OpenAI SDK as a Rein model.
 *
 * `fromOpenAI(client, { model, api })` turns an `OpenAI` client into the `model` of `agent()`,
 * over Chat Completions or the Responses API: messages become the API's messages or input
 * items (reasoning items kept verbatim), tools become function tools with their JSON Schemas,
 * the run's abort signal cancels the request; text, reasoning, tool calls, usage and the
 * response id come back. `{ stream: true }` streams tokens to the `messages` stream mode.
 *
 * @packageDocumentation
 */
export { fromOpenAI } from "./model.ts";
export type { OpenAIModelOptions } from "./model.ts";
export { fromChatCompletion, toChatMessages } from "./chat.ts";
export { fromResponse, toResponseInput } from "./responses.ts";
