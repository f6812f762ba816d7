/**
 * Defining one of the server's features as a Fastify plugin that says what it needs and what it
 * adds: its name, the plugins it depends on (Fastify refuses to load it before them), the
 * decorations it reads (Fastify checks they exist) and the ones it adds (checked once it loaded).
 * The metadata is Fastify's own (`Symbol.for("plugin-meta")`, what `fastify-plugin` writes).
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyPluginOptions } from "fastify";
import type { ServerContext } from "../context.ts";

declare module "fastify" {
  interface FastifyInstance {
    /** The server's context: store, graphs, runs, auth (added by the `rein-context` plugin). */
    rein: ServerContext;
  }
}

/** What a feature plugin declares. */
export interface FeatureMeta {
  /** The plugin's name, as other plugins' `dependencies` name it. */
  name: string;
  /** Plugins that must be registered before this one. */
  dependencies?: readonly string[];
  /** Decorations of the instance this plugin reads. */
  needs?: readonly string[];
  /** Decorations this plugin adds to the instance. */
  decorates?: readonly string[];
  /**
   * Whether the plugin's hooks, handlers and decorations stay inside it (Fastify's encapsulation,
   * the default) or apply to the whole app (`false`: Fastify's `skip-override`, for what every
   * route must see — the context, error mapping, request counting).
   */
  encapsulated: boolean;
}

/**
 * `register` as a Fastify plugin with `meta` declared.
 *
 * @throws Error at load when the plugin did not add a decoration it declares.
 */
export function featurePlugin<Options extends FastifyPluginOptions>(
  meta: FeatureMeta,
  register: (app: FastifyInstance, options: Options) => Promise<void> | void,
): FastifyPluginAsync<Options> {
  const plugin = async (app: FastifyInstance, options: Options): Promise<void> => {
    await register(app, options);
    for (const decoration of meta.decorates ?? [])
      if (!app.hasDecorator(decoration))
        throw new Error(`Plugin ${meta.name} declares the decoration ${decoration} but adds none.`);
  };
  Object.assign(plugin, {
    [Symbol.for("plugin-meta")]: {
      name: meta.name,
      dependencies: [...(meta.dependencies ?? [])],
      decorators: { fastify: [...(meta.needs ?? [])] },
    },
    [Symbol.for("skip-override")]: !meta.encapsulated,
  });
  return plugin;
}
