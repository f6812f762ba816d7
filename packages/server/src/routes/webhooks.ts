/**
 * `/webhooks`: a tenant's subscriptions to the outbox's events, their secrets and delivery logs.
 * Every route needs the `admin` scope: a subscription receives every question of its tenant
 * (payloads included), so making one is granting read access to the whole tenant, and a
 * delivery log shows where that data went. A token sees only its tenant's subscriptions; another
 * tenant's id is "not found", as for threads.
 */
import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { NotFoundError } from "@rein/core";
import type { StoredWebhookSubscription, WebhookSubscription } from "@rein/core/store";
import type { Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { defineRoute } from "./define.ts";
import { canSee } from "../thread-access.ts";
import {
  CreatedWebhookSchema,
  CreateWebhookBody,
  DeletedWebhookSchema,
  DeliveriesQuery,
  RotatedWebhookSchema,
  RotateWebhookBody,
  WebhookDeliveryListSchema,
  WebhookListSchema,
  WebhookParams,
} from "@rein/wire";
import { newWebhookSecret } from "../webhooks/signing.ts";
import type { WebhookBackend } from "../webhooks/store.ts";

/** The old secret's grace period after a rotation when the request names none: a day. */
const DEFAULT_GRACE_SECONDS = 86_400;

/** A subscription without its secrets. */
function shown(s: StoredWebhookSubscription): WebhookSubscription {
  return {
    id: s.id,
    tenant: s.tenant,
    url: s.url,
    events: s.events,
    graphs: s.graphs,
    createdAt: s.createdAt,
    createdBy: s.createdBy,
    previousSecretUntil: s.previousSecretUntil,
  };
}

/** The subscription `id` if the caller's tenant owns it. @throws NotFoundError otherwise. */
async function owned(
  backend: WebhookBackend,
  principal: Principal,
  id: string,
): Promise<StoredWebhookSubscription> {
  const subscription = await backend.webhooks.getSubscription(id);
  if (!subscription || !canSee(principal, subscription.tenant))
    throw new NotFoundError("webhook", id);
  return subscription;
}

/** Registers the `/webhooks` routes on a store with webhook tables. */
export function registerWebhookRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  backend: WebhookBackend,
): void {
  registerSubscriptionRoutes(app, ctx, backend);
  registerSubscriptionIdRoutes(app, ctx, backend);
}

/** `POST /webhooks` and `GET /webhooks`. */
function registerSubscriptionRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  backend: WebhookBackend,
): void {
  defineRoute(
    app,
    ctx,
    {
      method: "POST",
      url: "/webhooks",
      operationId: "createWebhook",
      summary:
        "Subscribes a URL to events of the caller's tenant; the answer holds the signing secret, shown only once.",
      scope: "admin",
      body: CreateWebhookBody,
      responses: { 201: CreatedWebhookSchema },
    },
    async ({ body, principal }) => {
      const subscription: StoredWebhookSubscription = {
        id: `wh_${randomBytes(12).toString("hex")}`,
        tenant: principal.tenant,
        url: body.url,
        events: [...new Set(body.events)],
        graphs: [...new Set(body.graphs ?? [])],
        createdAt: new Date().toISOString(),
        createdBy: principal.subject,
        secret: newWebhookSecret(),
        previousSecret: null,
        previousSecretUntil: null,
      };
      await backend.webhooks.createSubscription(subscription);
      return { status: 201, body: { ...shown(subscription), secret: subscription.secret } };
    },
  );

  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/webhooks",
      operationId: "listWebhooks",
      summary: "The caller's tenant's subscriptions (without secrets).",
      scope: "admin",
      responses: { 200: WebhookListSchema },
    },
    async ({ principal }) => {
      const all = await backend.webhooks.listSubscriptions(principal.tenant ?? undefined);
      return { status: 200, body: { items: all.map(shown) } };
    },
  );
}

/** The routes of one subscription: delete, rotate, deliveries. */
function registerSubscriptionIdRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  backend: WebhookBackend,
): void {
  defineRoute(
    app,
    ctx,
    {
      method: "DELETE",
      url: "/webhooks/:id",
      operationId: "deleteWebhook",
      summary: "Deletes a subscription and its pending deliveries and log.",
      scope: "admin",
      params: WebhookParams,
      responses: { 200: DeletedWebhookSchema },
    },
    async ({ params, principal }) => {
      await owned(backend, principal, params.id);
      await backend.webhooks.deleteSubscription(params.id);
      return { status: 200, body: { id: params.id, deleted: true as const } };
    },
  );

  defineRoute(
    app,
    ctx,
    {
      method: "POST",
      url: "/webhooks/:id/rotate",
      operationId: "rotateWebhookSecret",
      summary:
        "Replaces the signing secret (shown only here); the old one keeps signing too for graceSeconds (default a day).",
      scope: "admin",
      params: WebhookParams,
      body: RotateWebhookBody,
      responses: { 200: RotatedWebhookSchema },
    },
    async ({ params, body, principal }) => {
      await owned(backend, principal, params.id);
      const secret = newWebhookSecret();
      const grace = body.graceSeconds ?? DEFAULT_GRACE_SECONDS;
      const previousSecretUntil = new Date(Date.now() + grace * 1000).toISOString();
      if (!(await backend.webhooks.rotateSecret(params.id, secret, previousSecretUntil)))
        throw new NotFoundError("webhook", params.id);
      return { status: 200, body: { id: params.id, secret, previousSecretUntil } };
    },
  );

  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/webhooks/:id/deliveries",
      operationId: "listWebhookDeliveries",
      summary:
        "A subscription's deliveries, newest first: status, attempts (time, HTTP status, error, duration), next attempt.",
      scope: "admin",
      params: WebhookParams,
      query: DeliveriesQuery,
      responses: { 200: WebhookDeliveryListSchema },
    },
    async ({ params, query, principal }) => {
      await owned(backend, principal, params.id);
      const deliveries = await backend.webhooks.listDeliveries(params.id, query.limit ?? 50);
      return {
        status: 200,
        body: { items: deliveries.map(({ subscriptionId: _id, ...delivery }) => delivery) },
      };
    },
  );
}
