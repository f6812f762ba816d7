/**
 * The `rein-governance` plugin: bulk decisions, the audit log (`/audit`, `/audit/verify`,
 * `/audit/export`) and, on a store with the `apiKeys` capability, the `/api-keys` routes.
 * Encapsulated: it adds routes only.
 */
import { hasCapability } from "@rein/core";
import { registerApiKeyRoutes } from "../routes/api-keys.ts";
import { registerAuditRoutes } from "../routes/audit.ts";
import { registerDecisionRoutes } from "../routes/decisions.ts";
import { featurePlugin } from "./define.ts";

/** Decisions, audit and API-key routes. */
export const governancePlugin = featurePlugin<Record<never, never>>(
  {
    name: "rein-governance",
    dependencies: ["rein-context", "rein-http"],
    needs: ["rein"],
    encapsulated: true,
  },
  (app) => {
    const context = app.rein;
    registerDecisionRoutes(app, context);
    registerAuditRoutes(app, context);
    if (hasCapability(context.store, "apiKeys"))
      registerApiKeyRoutes(app, context, context.store.apiKeys);
  },
);
