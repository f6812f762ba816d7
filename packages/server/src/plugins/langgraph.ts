/**
 * The `rein-langgraph` plugin: LangGraph's Agent Server protocol under `/langgraph` — the
 * threads, runs and assistants routes with their own error shape, and the v2 commands and
 * event streams. Encapsulated: the protocol's error handling stays under its prefix.
 */
import { LANGGRAPH_PREFIX, registerLangGraph } from "../langgraph/index.ts";
import { langgraphV2 } from "../langgraph/v2/index.ts";
import { featurePlugin } from "./define.ts";

/** The LangGraph protocol layer. */
export const langgraphPlugin = featurePlugin<Record<never, never>>(
  {
    name: "rein-langgraph",
    dependencies: ["rein-context", "rein-http"],
    needs: ["rein"],
    encapsulated: true,
  },
  async (app) => {
    await registerLangGraph(app, app.rein);
    await app.register(langgraphV2(app.rein), { prefix: LANGGRAPH_PREFIX });
  },
);
