/**
 * The `slack` section of the notify config file (`rein serve --notify FILE`): the bot token that
 * posts, the signing secret that proves a button click came from Slack, the channel, and the
 * people whose Slack user ids stand for Rein principals. See docs/slack.md.
 */
import { InvalidInputError } from "@rein/core";
import { z } from "zod";

/** Slack's user ids: `U…` or `W…` (Enterprise Grid), upper-case letters and digits. */
const SlackUserId = z.string().regex(/^[UW][A-Z0-9]{2,40}$/, "a Slack user id such as U024BE7LH");

/** One person: the Slack user id that acts as this principal when they click a button. */
export const SlackPersonSchema = z
  .object({
    subject: z.string().min(1).max(256),
    groups: z.array(z.string().min(1).max(256)).optional(),
    roles: z.array(z.string().min(1).max(256)).optional(),
    /** Only this tenant's questions may be answered from Slack (omitted: any tenant's). */
    tenant: z.string().min(1).max(256).optional(),
    slackUserId: SlackUserId,
  })
  .strict();

/** The `slack` section, as written in the file. */
export const SlackConfigSchema = z
  .object({
    /** `xoxb-…`: a bot token with the `chat:write` scope. */
    botToken: z.string().min(8),
    /** The app's signing secret (Basic Information → App Credentials). */
    signingSecret: z.string().min(8),
    /** The channel id (`C…`) or name the questions are posted to. */
    channel: z.string().min(1).max(256),
    /** Slack's Web API base URL. Default `https://slack.com/api`. */
    apiUrl: z.url().optional(),
    /** The console's base URL, for the Open button (omitted: no Open button). */
    publicUrl: z.url().optional(),
    people: z.array(SlackPersonSchema).max(10_000).default([]),
  })
  .strict()
  .refine(
    (config) => new Set(config.people.map((p) => p.slackUserId)).size === config.people.length,
    { message: "each slackUserId may appear once in people", path: ["people"] },
  );

/** One mapped person. */
export type SlackPerson = z.infer<typeof SlackPersonSchema>;

/** The Slack settings of a server (`ServerOptions.slack`). */
export type SlackOptions = z.infer<typeof SlackConfigSchema>;

/** The default Web API base URL. */
export const SLACK_API_URL = "https://slack.com/api";

/**
 * Parses the `slack` section of a notify config file.
 *
 * @throws InvalidInputError naming each problem (never echoing the token or the secret).
 */
export function parseSlackConfig(raw: unknown, source = "slack"): SlackOptions {
  const parsed = SlackConfigSchema.safeParse(raw);
  if (!parsed.success)
    throw new InvalidInputError(
      `${source} is not a valid Slack section: ${parsed.error.issues
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")}`,
      { source },
    );
  return parsed.data;
}
