/**
 * The notifier interface, as the notify channels implement it: declared beside the webhook
 * outbox's delivery loop that feeds it (`webhooks/notifier.ts`), so the outbox never imports a
 * channel.
 */
export * from "../webhooks/notifier.ts";
