/**
 * The `rein-api` plugin: the API's own routes — meta (`/healthz`, `/readyz`, `/openapi.json`),
 * threads, runs, the approval queue, `whoami` and the sign-in config. Encapsulated: it adds
 * routes only.
 */
import { registerAuthConfigRoute } from "../routes/auth-config.ts";
import { registerInterruptRoutes } from "../routes/interrupts.ts";
import { registerMetaRoutes } from "../routes/meta.ts";
import { registerRunRoutes } from "../routes/runs.ts";
import { registerThreadRoutes } from "../routes/threads.ts";
import { registerWhoamiRoute } from "../routes/whoami.ts";
import { featurePlugin } from "./define.ts";

/** The API's thread, run, queue and meta routes. */
export const apiPlugin = featurePlugin<Record<never, never>>(
  {
    name: "rein-api",
    dependencies: ["rein-context", "rein-http"],
    needs: ["rein"],
    encapsulated: true,
  },
  (app) => {
    registerMetaRoutes(app, app.rein);
    registerThreadRoutes(app, app.rein);
    registerRunRoutes(app, app.rein);
    registerInterruptRoutes(app, app.rein);
    registerWhoamiRoute(app, app.rein);
    registerAuthConfigRoute(app, app.rein);
  },
);
