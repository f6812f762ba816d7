/**
 * The zod schemas of the `/webhooks` routes (the OpenAPI document derives from them).
 */
import { WEBHOOK_EVENT_TYPES } from "@rein/core/store";
import { z } from "zod";
import { Id, text } from "./schemas.ts";

/** An event type. */
export const WebhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);

/** Where a subscription posts: an absolute http(s) URL without credentials. */
const WebhookUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "http:" || url.protocol === "https:") && !url.username;
    } catch {
      return false;
    }
  }, "must be an absolute http:// or https:// URL without user:password@");

/** `POST /webhooks`. */
export const CreateWebhookBody = z
  .object({
    url: WebhookUrl,
    events: z.array(WebhookEventTypeSchema).min(1).max(WEBHOOK_EVENT_TYPES.length),
    /** Root graphs (apps) to receive events of; omitted or empty: every graph. */
    graphs: z
      .array(text(256).refine((g) => !g.includes(","), "a graph name has no comma"))
      .max(100)
      .optional(),
  })
  .strict();

/** `POST /webhooks/:id/rotate`. */
export const RotateWebhookBody = z
  .object({
    /** How long the old secret keeps signing too, in seconds (default a day, at most 7 days). */
    graceSeconds: z.number().int().min(0).max(604_800).optional(),
  })
  .strict();

/** `:id` of a subscription. */
export const WebhookParams = z.object({ id: Id }).strict();

/** `GET /webhooks/:id/deliveries`. */
export const DeliveriesQuery = z
  .object({ limit: z.coerce.number().int().min(1).max(500).optional() })
  .strict();

/** A subscription as the API shows it. */
export const WebhookSchema = z.object({
  id: z.string(),
  tenant: z.string().nullable(),
  url: z.string(),
  events: z.array(WebhookEventTypeSchema),
  graphs: z.array(z.string()),
  createdAt: z.string(),
  createdBy: z.string(),
  previousSecretUntil: z.string().nullable(),
});

/** A new subscription, with its secret (shown only here). */
export const CreatedWebhookSchema = WebhookSchema.extend({ secret: z.string() });

/** `GET /webhooks`. */
export const WebhookListSchema = z.object({ items: z.array(WebhookSchema) });

/** A rotated secret: the new one (shown only here) and until when the old one signs too. */
export const RotatedWebhookSchema = z.object({
  id: z.string(),
  secret: z.string(),
  previousSecretUntil: z.string(),
});

/** One delivery with its attempts. */
export const WebhookDeliverySchema = z.object({
  eventId: z.string(),
  type: WebhookEventTypeSchema,
  status: z.enum(["pending", "delivered", "dead"]),
  attempts: z.number(),
  nextAttemptAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  log: z.array(
    z.object({
      attempt: z.number(),
      at: z.string(),
      statusCode: z.number().nullable(),
      error: z.string().nullable(),
      durationMs: z.number(),
    }),
  ),
});

/** `GET /webhooks/:id/deliveries`. */
export const WebhookDeliveryListSchema = z.object({ items: z.array(WebhookDeliverySchema) });

/** `DELETE /webhooks/:id`. */
export const DeletedWebhookSchema = z.object({ id: z.string(), deleted: z.literal(true) });
