import { createServer, type Server } from "node:http";
import { Webhook, WebhookVerificationError } from "standardwebhooks";

/** What Rein posts: `type`, the commit time, and the event's fields (see the tables above). */
export interface ReinEvent {
  type: string;
  timestamp: string;
  data: { threadId: string; runId: string; interruptId?: string; [field: string]: unknown };
}

/**
 * A receiver: verify the signature on the raw body (before parsing it), answer 2xx quickly, and
 * handle each `webhook-id` once — a retry resends the same id.
 */
export function startReceiver(secret: string, handle: (event: ReinEvent) => void): Server {
  const webhook = new Webhook(secret); // "whsec_…", as `rein webhooks add` printed it
  const handled = new Set<string>(); // in production: a table with a unique key
  return createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const headers = {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"]),
      };
      try {
        const event = webhook.verify(body, headers) as ReinEvent;
        if (!handled.has(headers["webhook-id"])) {
          handled.add(headers["webhook-id"]);
          handle(event);
        }
        response.writeHead(204).end();
      } catch (error) {
        // Forged, tampered with, or older than five minutes: refuse.
        response.writeHead(error instanceof WebhookVerificationError ? 400 : 500).end();
      }
    });
  });
}
