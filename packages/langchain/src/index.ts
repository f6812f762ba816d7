/**
 * `@rein/langchain` — LangChain.js chat models as Rein models.
 *
 * `fromLangChain(chatModel)` turns any `BaseChatModel` with tool calling (ChatOpenAI,
 * ChatAnthropic, ChatOllama...) into the `model` of `agent()`: messages become LangChain
 * messages with standard content blocks, tools are bound with their JSON Schemas, the run's
 * abort signal is passed as `signal`; text, reasoning, tool calls, usage and ids come back.
 *
 * @packageDocumentation
 */
export { fromLangChain, isLastChunk } from "./model.ts";
export type { LangChainModelOptions } from "./model.ts";
export { fromAIMessage, fromUsageMetadata, toLangChainMessages } from "./convert.ts";
