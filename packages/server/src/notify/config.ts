/**
 * The notifier configuration (`--notify FILE` or `REIN_NOTIFY_FILE`): where the server is
 * reachable (for links), the people who answer questions, the fallback recipients, and each
 * channel's settings. Validated by zod; a bad file stops the process at start with what is wrong.
 */
import { readFileSync } from "node:fs";
import { InvalidInputError } from "@rein/core";
import { WEBHOOK_EVENT_TYPES } from "@rein/core/store";
import { SlackConfigSchema } from "./slack-config.ts";
import { z } from "zod";

/** Default lifetime of a decision link: three days. */
export const DEFAULT_LINK_TTL_MS = 3 * 86_400_000;

/** Longest lifetime of a decision link: thirty days. */
export const MAX_LINK_TTL_MS = 30 * 86_400_000;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Milliseconds of a duration: `90s`, `15m`, `12h`, `3d`, or a number of seconds.
 *
 * @returns `null` when the text is not a positive duration.
 */
export function parseDuration(text: string | number): number | null {
  if (typeof text === "number") return Number.isFinite(text) && text > 0 ? text * 1000 : null;
  const match = /^(\d+(?:\.\d+)?)\s*([smhd]?)$/.exec(text.trim());
  if (!match?.[1]) return null;
  const ms = Number(match[1]) * (UNITS[match[2] || "s"] ?? 1000);
  return ms > 0 ? Math.round(ms) : null;
}

const Duration = z.union([z.string(), z.number()]).superRefine((value, ctx) => {
  const ms = parseDuration(value);
  if (ms === null)
    ctx.addIssue({ code: "custom", message: "a duration: 90s, 15m, 12h, 3d or seconds" });
  else if (ms > MAX_LINK_TTL_MS) ctx.addIssue({ code: "custom", message: "at most 30d" });
});

const Name = z.string().min(1).max(256);

/** One person who may be told about questions. */
export const PersonSchema = z
  .object({
    subject: Name,
    /** The tenant whose questions this person is told about; omitted: every tenant's. */
    tenant: Name.optional(),
    groups: z.array(Name).optional(),
    roles: z.array(Name).optional(),
    email: z.email().optional(),
  })
  .strict();

/** A person of the notifier config. */
export type Person = z.infer<typeof PersonSchema>;

/** The event types a notifier may subscribe to. */
const EventType = z.enum(WEBHOOK_EVENT_TYPES);

/** The `email` section. */
export const EmailConfigSchema = z
  .object({
    /** `smtp://host:port` or `smtps://user:pass@host:port` (nodemailer's URL). */
    smtp: z.string().regex(/^smtps?:\/\//, "an smtp:// or smtps:// URL"),
    from: z.string().min(1).max(512),
    events: z
      .array(EventType)
      .min(1)
      .default(["interrupt.pending", "interrupt.reminded", "interrupt.escalated"] as z.infer<
        typeof EventType
      >[]),
  })
  .strict();

/** The notifier config file. */
export const NotifyConfigSchema = z
  .object({
    /** The server's URL as people reach it: decision links and "Open in console" point here. */
    publicUrl: z.url().refine((url) => /^https?:\/\//.test(url), "an http(s) URL"),
    people: z.array(PersonSchema).default([]),
    /** Addresses told about a question without an approval policy. */
    fallback: z.array(z.email()).default([]),
    email: EmailConfigSchema.optional(),
    /** Slack: its own people (Slack user ids), see docs/slack.md. */
    slack: SlackConfigSchema.optional(),
    links: z
      .object({
        ttl: Duration.optional(),
        /** The HMAC key of the links (`REIN_LINK_SECRET` wins over it). */
        secret: z.string().min(32, "at least 32 characters").optional(),
        /** Keys of earlier links still honoured after a rotation (never used to sign). */
        previousSecrets: z.array(z.string().min(32)).optional(),
      })
      .strict()
      .default({}),
  })
  // A misspelt section would otherwise be a notifier silently never set up.
  .strict();

/** A validated notifier config. */
export type NotifyConfig = z.infer<typeof NotifyConfigSchema>;

/** The link settings a server runs with, resolved from the config and the environment. */
export interface LinkSettings {
  /** The key that signs new links. */
  secret: string;
  /** Keys that still verify (rotated out). */
  previousSecrets: string[];
  /** The server's public URL, without a trailing slash. */
  publicUrl: string;
  /** Lifetime of a minted link, ms. */
  ttlMs: number;
}

/**
 * Parses a notifier config from JSON text.
 *
 * @throws InvalidInputError naming each problem (never echoing a secret).
 */
export function parseNotifyConfig(text: string, source: string): NotifyConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new InvalidInputError(`${source} is not valid JSON.`, { source });
  }
  const parsed = NotifyConfigSchema.safeParse(raw);
  if (!parsed.success)
    throw new InvalidInputError(
      `${source} is not a valid notifier config: ${parsed.error.issues
        .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
        .join("; ")}`,
      { source },
    );
  return parsed.data;
}

/** The config of `--notify FILE`, or of the file `REIN_NOTIFY_FILE` names; `null` without. */
export function loadNotifyConfig(options: {
  file?: string | undefined;
  env?: NodeJS.ProcessEnv;
}): NotifyConfig | null {
  const file = options.file ?? (options.env ?? process.env)["REIN_NOTIFY_FILE"];
  if (!file) return null;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new InvalidInputError(`The notifier config ${file} cannot be read: ${String(error)}`);
  }
  return parseNotifyConfig(text, file);
}

/**
 * The link settings of a config: the secret from `REIN_LINK_SECRET`, else `links.secret`.
 *
 * @returns `null` when no secret is set (no link is minted then).
 * @throws InvalidInputError for a `REIN_LINK_SECRET` shorter than 32 characters.
 */
export function linkSettings(
  config: Pick<NotifyConfig, "publicUrl" | "links">,
  env: NodeJS.ProcessEnv = process.env,
): LinkSettings | null {
  const fromEnv = env["REIN_LINK_SECRET"] || undefined; // empty: unset
  if (fromEnv !== undefined && fromEnv.length < 32)
    throw new InvalidInputError("REIN_LINK_SECRET must be at least 32 characters.");
  const secret = fromEnv ?? config.links.secret;
  if (!secret) return null;
  return {
    secret,
    previousSecrets: config.links.previousSecrets ?? [],
    publicUrl: config.publicUrl.replace(/\/+$/, ""),
    ttlMs:
      config.links.ttl === undefined
        ? DEFAULT_LINK_TTL_MS
        : (parseDuration(config.links.ttl) ?? DEFAULT_LINK_TTL_MS),
  };
}
