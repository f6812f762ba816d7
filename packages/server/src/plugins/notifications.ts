/**
 * The `rein-notifications` plugin: what tells people and takes their answers back — the
 * `/webhooks` routes and the outbox's delivery loop (which hands `notify:<kind>` events to the
 * email and Slack notifiers), Slack's interactivity endpoint, and decision links. Encapsulated:
 * its shutdown hooks (Slack clicks in flight, then the delivery loop) run after the context's
 * and before the background queue's, in the order the plugins were registered.
 */
import type { Checkpointer } from "@rein/core";
import { interruptIdOf } from "../ids.ts";
import type { LinkSettings } from "../notify/config.ts";
import { parseSlackConfig, type SlackOptions } from "../notify/slack-config.ts";
import { registerLinkRoutes } from "../routes/links.ts";
import { registerSlackRoutes } from "../routes/slack.ts";
import { registerWebhookRoutes } from "../routes/webhooks.ts";
import {
  DEFAULT_DELIVERY,
  WebhookDeliveryLoop,
  type DeliveryExtras,
  type WebhookDeliverySettings,
} from "../webhooks/delivery.ts";
import type { Notifier } from "../webhooks/notifier.ts";
import { webhookBackendOf } from "../webhooks/store.ts";
import { featurePlugin } from "./define.ts";

/** Options of {@link notificationsPlugin}. */
export interface NotificationsPluginOptions {
  /** The store as checked, not the metrics' view: the loop's policy reads are not answers. */
  served: Checkpointer;
  /** The loop's pacing, or false to leave delivery to other processes. */
  delivery: WebhookDeliverySettings | false | undefined;
  notifiers: readonly Notifier[];
  slack: SlackOptions | undefined;
  links: LinkSettings | null;
  /** Hears of every delivery attempt (the metrics' counter). */
  onAttempt: DeliveryExtras["onAttempt"];
}

/** Webhooks and their delivery, Slack's endpoint and decision links. */
export const notificationsPlugin = featurePlugin<NotificationsPluginOptions>(
  {
    name: "rein-notifications",
    dependencies: ["rein-context", "rein-http"],
    needs: ["rein"],
    encapsulated: true,
  },
  (app, options) => {
    const context = app.rein;
    const webhooks = webhookBackendOf(options.served);
    if (webhooks) registerWebhookRoutes(app, context, webhooks);
    if (options.slack) registerSlackRoutes(app, context, parseSlackConfig(options.slack, "slack"));
    registerLinkRoutes(app, context, options.links);
    if (!webhooks || options.delivery === false) return;
    const delivery = new WebhookDeliveryLoop(
      webhooks.webhooks,
      webhooks.serializer,
      options.delivery ?? DEFAULT_DELIVERY,
      app.log,
      {
        notifiers: options.notifiers,
        policyOf: async (id) => (await options.served.getInterrupt(interruptIdOf(id)))?.policy,
        onAttempt: options.onAttempt,
      },
    );
    app.addHook("onReady", (done) => {
      delivery.start();
      done();
    });
    app.addHook("preClose", () => delivery.stop());
  },
);
