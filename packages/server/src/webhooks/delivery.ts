/**
 * The delivery loop every `rein serve` and `rein worker` runs: it claims due deliveries from the
 * store under a lease (so loops on other processes skip them, and a process that dies mid-send
 * loses them to the next loop once the lease lapses), sends each signed, and records the attempt:
 * delivered on a 2xx, retried with exponential backoff and full jitter otherwise, dead after the
 * last attempt. Runs never wait for it: it shares nothing with them but the store.
 */
import type { Serializer } from "@rein/core";
import type { ClaimedDelivery, WebhookAttemptResult, WebhookStore } from "@rein/core/store";
import { webhookBody } from "./payload.ts";
import { signAttempt } from "./signing.ts";

/** How the loop paces itself. Every field has a default (see {@link deliverySettingsFromEnv}). */
export interface WebhookDeliverySettings {
  /** How often an idle loop looks for due deliveries, ms. Default 1000. */
  pollMs: number;
  /** Deliveries claimed at once. Default 50. */
  batch: number;
  /** Requests in flight at once. Default 8. */
  concurrency: number;
  /** How long a receiver may take to answer, ms. Default 10 s. */
  timeoutMs: number;
  /** How long a claim lasts (a dead process's claims wait this long), ms. Default timeout + 20 s. */
  leaseMs: number;
  /** The first retry's delay, ms; doubled per attempt, with jitter. Default 5 s. */
  backoffMs: number;
  /** The longest delay between attempts, ms. Default 1 h. */
  maxBackoffMs: number;
  /** Attempts before a delivery is dead. Default 12. */
  maxAttempts: number;
}

/** The defaults of {@link WebhookDeliverySettings}. */
export const DEFAULT_DELIVERY: WebhookDeliverySettings = {
  pollMs: 1000,
  batch: 50,
  concurrency: 8,
  timeoutMs: 10_000,
  leaseMs: 30_000,
  backoffMs: 5_000,
  maxBackoffMs: 3_600_000,
  maxAttempts: 12,
};

const ENV: Record<keyof WebhookDeliverySettings, string> = {
  pollMs: "REIN_WEBHOOK_POLL_MS",
  batch: "REIN_WEBHOOK_BATCH",
  concurrency: "REIN_WEBHOOK_CONCURRENCY",
  timeoutMs: "REIN_WEBHOOK_TIMEOUT_MS",
  leaseMs: "REIN_WEBHOOK_LEASE_MS",
  backoffMs: "REIN_WEBHOOK_BACKOFF_MS",
  maxBackoffMs: "REIN_WEBHOOK_MAX_BACKOFF_MS",
  maxAttempts: "REIN_WEBHOOK_MAX_ATTEMPTS",
};

/**
 * The settings from `REIN_WEBHOOK_*` variables (a missing or invalid one keeps its default).
 * Without an explicit lease it is the timeout plus 20 s, so a claim never lapses mid-request.
 */
export function deliverySettingsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): WebhookDeliverySettings {
  const settings = { ...DEFAULT_DELIVERY };
  for (const key of Object.keys(ENV) as (keyof WebhookDeliverySettings)[]) {
    const value = Number(env[ENV[key]]);
    if (env[ENV[key]] !== undefined && Number.isFinite(value) && value > 0) settings[key] = value;
  }
  if (env[ENV.leaseMs] === undefined) settings.leaseMs = settings.timeoutMs + 20_000;
  return settings;
}

/** The delay before attempt `attempt + 1`: exponential, capped, with full jitter. */
export function backoffDelay(attempt: number, settings: WebhookDeliverySettings): number {
  const ceiling = Math.min(settings.maxBackoffMs, settings.backoffMs * 2 ** (attempt - 1));
  // Full jitter spreads the retries of many failed deliveries (a receiver back after an outage).
  return Math.floor(ceiling / 2 + (Math.random() * ceiling) / 2);
}

/** A log for the loop's failures (Fastify's logger fits). */
export interface DeliveryLog {
  warn(details: object, message: string): void;
}

/** What one request came to. */
interface Sent {
  statusCode: number | null;
  error: string | null;
}

/** The delivery loop of one process. */
export class WebhookDeliveryLoop {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #stopped = false;

  constructor(
    private readonly store: WebhookStore,
    private readonly serializer: Serializer,
    private readonly settings: WebhookDeliverySettings = DEFAULT_DELIVERY,
    private readonly log?: DeliveryLog,
    /** Told of each attempt once it is recorded (metrics). */
    private readonly onAttempt?: (result: WebhookAttemptResult) => void,
  ) {}

  /** Starts looking for due deliveries, now and every `pollMs`. */
  start(): void {
    this.#schedule(0);
  }

  /** Stops the loop; requests in flight finish (each within the timeout) and are recorded. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#running;
  }

  #schedule(delay: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#round()
        .catch((error: unknown) => {
          this.log?.warn({ err: error }, "webhook delivery round failed");
          return false;
        })
        .then((full) => this.#schedule(full ? 0 : this.settings.pollMs));
    }, delay);
    this.#timer.unref();
  }

  /** Claims and sends one batch; `true` when the batch was full (more may be due). */
  async #round(): Promise<boolean> {
    const now = Date.now();
    const claims = await this.store.claimDeliveries(
      new Date(now).toISOString(),
      new Date(now + this.settings.leaseMs).toISOString(),
      this.settings.batch,
    );
    const queue = [...claims];
    const worker = async (): Promise<void> => {
      for (let claim = queue.shift(); claim; claim = queue.shift()) await this.#deliver(claim);
    };
    await Promise.all(
      Array.from({ length: Math.min(this.settings.concurrency, claims.length) }, worker),
    );
    return claims.length === this.settings.batch && !this.#stopped;
  }

  async #deliver(claim: ClaimedDelivery): Promise<void> {
    const attempt = claim.attempts + 1;
    const at = new Date();
    const started = performance.now();
    const sent = await this.#send(claim, at);
    const durationMs = performance.now() - started;
    const delivered = sent.statusCode !== null && sent.statusCode >= 200 && sent.statusCode < 300;
    const dead = !delivered && attempt >= this.settings.maxAttempts;
    const result: WebhookAttemptResult = {
      subscriptionId: claim.subscription.id,
      eventId: claim.event.eventId,
      attempt,
      at: at.toISOString(),
      statusCode: sent.statusCode,
      error: sent.error,
      durationMs,
      outcome: delivered ? "delivered" : dead ? "dead" : "retry",
      nextAttemptAt:
        delivered || dead
          ? null
          : new Date(Date.now() + backoffDelay(attempt, this.settings)).toISOString(),
    };
    await this.store.recordAttempt(result);
    this.onAttempt?.(result);
  }

  async #send(claim: ClaimedDelivery, at: Date): Promise<Sent> {
    let body: string;
    try {
      body = webhookBody(claim.event, this.serializer);
    } catch (error) {
      return { statusCode: null, error: `the event could not be encoded: ${message(error)}` };
    }
    try {
      const response = await fetch(claim.subscription.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "rein-webhooks",
          ...signAttempt(claim.subscription, claim.event.eventId, at, body),
        },
        body,
        // A redirect is not followed: the signed request goes only where it was registered.
        redirect: "manual",
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
      await response.body?.cancel();
      const ok = response.status >= 200 && response.status < 300;
      return { statusCode: response.status, error: ok ? null : `HTTP ${response.status}` };
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === "TimeoutError";
      return {
        statusCode: null,
        error: timedOut ? `no answer within ${this.settings.timeoutMs} ms` : message(error),
      };
    }
  }
}

function message(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const cause =
    error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${text}${cause}`.slice(0, 500);
}
