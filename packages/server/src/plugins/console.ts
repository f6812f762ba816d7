/**
 * The `rein-console` plugin: the built approval console, served at `/` from a directory (one
 * route per file). Encapsulated: `@fastify/static`'s reply decoration stays inside it.
 */
import { registerConsole } from "../console.ts";
import { featurePlugin } from "./define.ts";

/** Options of {@link consolePlugin}. */
export interface ConsolePluginOptions {
  /** The console's build; ignored when it holds no `index.html`. */
  dir: string;
}

/** Serves the console's files. */
export const consolePlugin = featurePlugin<ConsolePluginOptions>(
  { name: "rein-console", dependencies: ["rein-http"], encapsulated: true },
  async (app, { dir }) => {
    await registerConsole(app, dir);
  },
);
