/**
 * From a notifier config to what a process runs: the notifiers, the link settings, and the
 * subscriptions that feed the notifiers (made at start).
 */
import { InvalidInputError } from "@rein/core";
import type {
  InterruptQueueStore,
  RuntimeStore,
  SideRecordStore,
  WebhookStore,
} from "@rein/core/store";
import { linkSettings, type LinkSettings, type NotifyConfig } from "./config.ts";
import { EmailNotifier } from "./email.ts";
import type { Notifier } from "./notifier.ts";
import { createSlackNotifier } from "./slack.ts";
import type { SlackOptions } from "./slack-config.ts";
import { ensureNotifySubscription } from "./subscriptions.ts";

/** What Slack hears of: the question and its steps post, the outcomes update the messages. */
const SLACK_EVENTS = [
  "interrupt.pending",
  "interrupt.reminded",
  "interrupt.escalated",
  "interrupt.answered",
  "interrupt.expired",
  "interrupt.cancelled",
] as const;

/** What a config sets up in one process. */
export interface NotifySetup {
  notifiers: Notifier[];
  links: LinkSettings | null;
  /** The Slack settings (`ServerOptions.slack`: the interactivity endpoint), when configured. */
  slack: SlackOptions | null;
  /** Makes sure each notifier's subscription exists (call once the store is open). */
  subscribe(webhooks: WebhookStore): Promise<string[]>;
  /** Closes the notifiers' connections. */
  close(): void;
}

/**
 * The notifiers and link settings of `config` on `store`.
 *
 * @throws InvalidInputError when email is configured with people but no link secret: the
 *   messages would have no decision links (set `REIN_LINK_SECRET` or `links.secret`).
 */
export function notifySetup(
  config: NotifyConfig,
  store: RuntimeStore & SideRecordStore & InterruptQueueStore,
  env: NodeJS.ProcessEnv = process.env,
): NotifySetup {
  const links = linkSettings(config, env);
  const notifiers: Notifier[] = [];
  let email: EmailNotifier | null = null;
  if (config.email) {
    if (!links)
      throw new InvalidInputError(
        "The email notifier sends decision links: set REIN_LINK_SECRET (or links.secret in the notifier config), at least 32 random characters.",
      );
    email = new EmailNotifier({
      config: { ...config, email: config.email },
      links,
      getInterrupt: (id) => store.getInterrupt(id),
    });
    notifiers.push(email);
  }
  // Slack's Open button goes to the console at the server's public URL unless told otherwise.
  const slack = config.slack
    ? { ...config.slack, publicUrl: config.slack.publicUrl ?? config.publicUrl }
    : null;
  if (slack) notifiers.push(createSlackNotifier({ ...slack, store }));
  return {
    notifiers,
    links,
    slack,
    async subscribe(webhooks) {
      const made: string[] = [];
      if (config.email) {
        const outcome = await ensureNotifySubscription(webhooks, "email", config.email.events);
        made.push(`notify:email (${outcome})`);
      }
      if (slack) {
        const outcome = await ensureNotifySubscription(webhooks, "slack", SLACK_EVENTS);
        made.push(`notify:slack (${outcome})`);
      }
      return made;
    },
    close() {
      email?.close();
    },
  };
}
