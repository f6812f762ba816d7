/**
 * The delivery loop every `rein serve` and `rein worker` runs: it claims due deliveries from the
 * store under a lease (so loops on other processes skip them, and a process that dies mid-send
 * loses them to the next loop once the lease lapses), sends each signed, and records the attempt:
 * delivered on a 2xx, retried with exponential backoff and full jitter otherwise, dead after the
 * last attempt. Runs never wait for it: it shares nothing with them but the store.
 */
import type { Serializer } from "@rein/core";
import type {
  ClaimedDelivery,
  StoredApprovalPolicy,
  WebhookAttemptResult,
  WebhookStore,
} from "@rein/core/store";
import { notifierKind, type Notifier } from "./notifier.ts";
import { webhookBodyOf } from "./payload.ts";
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
  /**
   * How long a delivered or dead delivery stays in the log (with its attempts and event), ms.
   * Default 7 days.
   */
  retentionMs?: number;
  /** How often the loop deletes what is past the retention, ms. Default 10 min. */
  pruneEveryMs?: number;
}

/** The defaults of {@link WebhookDeliverySettings}. */
export const DEFAULT_DELIVERY: Required<WebhookDeliverySettings> = {
  pollMs: 1000,
  batch: 50,
  concurrency: 8,
  timeoutMs: 10_000,
  leaseMs: 30_000,
  backoffMs: 5_000,
  maxBackoffMs: 3_600_000,
  maxAttempts: 12,
  retentionMs: 7 * 24 * 3_600_000,
  pruneEveryMs: 600_000,
};

/** Finished deliveries deleted per prune batch (one transaction each). */
const PRUNE_BATCH = 1000;
/** Batches per prune round at most, so a large backlog is worked off over several rounds. */
const PRUNE_BATCHES = 10;

const ENV: Record<keyof WebhookDeliverySettings, string> = {
  pollMs: "REIN_WEBHOOK_POLL_MS",
  batch: "REIN_WEBHOOK_BATCH",
  concurrency: "REIN_WEBHOOK_CONCURRENCY",
  timeoutMs: "REIN_WEBHOOK_TIMEOUT_MS",
  leaseMs: "REIN_WEBHOOK_LEASE_MS",
  backoffMs: "REIN_WEBHOOK_BACKOFF_MS",
  maxBackoffMs: "REIN_WEBHOOK_MAX_BACKOFF_MS",
  maxAttempts: "REIN_WEBHOOK_MAX_ATTEMPTS",
  retentionMs: "REIN_WEBHOOK_RETENTION_MS",
  pruneEveryMs: "REIN_WEBHOOK_PRUNE_EVERY_MS",
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

/** What the loop needs beyond the outbox: notifiers, and where approval policies are. */
export interface DeliveryExtras {
  /** The notifiers that deliver `notify:<kind>` subscriptions in this process. */
  notifiers?: readonly Notifier[];
  /** Told of each attempt once it is recorded (metrics). */
  onAttempt?: ((result: WebhookAttemptResult) => void) | undefined;
  /**
   * The stored approval policy of an interrupt, for the body's `approvers` (the SQL stores keep
   * it out of the outbox record).
   */
  policyOf?: (interruptId: string) => Promise<StoredApprovalPolicy | null | undefined>;
}

/** What one request (or notifier call) came to. */
interface Sent {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/** The delivery loop of one process. */
export class WebhookDeliveryLoop {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #stopped = false;
  /** When the next prune is due (epoch ms); the first round prunes. */
  #nextPruneAt = 0;

  constructor(
    private readonly store: WebhookStore,
    private readonly serializer: Serializer,
    private readonly settings: WebhookDeliverySettings = DEFAULT_DELIVERY,
    private readonly log?: DeliveryLog,
    private readonly extras: DeliveryExtras = {},
  ) {
    for (const notifier of extras.notifiers ?? []) this.#notifiers.set(notifier.kind, notifier);
  }

  readonly #notifiers = new Map<string, Notifier>();

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
    await this.#pruneIfDue(now);
    return claims.length === this.settings.batch && !this.#stopped;
  }

  /**
   * Deletes finished deliveries past the retention, at most every `pruneEveryMs`: without it
   * the outbox grows by every event forever. Every process's loop prunes; the store's deletes
   * skip rows another process is deleting, so the work is shared, not doubled.
   */
  async #pruneIfDue(now: number): Promise<void> {
    if (now < this.#nextPruneAt) return;
    const retentionMs = this.settings.retentionMs ?? DEFAULT_DELIVERY.retentionMs;
    this.#nextPruneAt = now + (this.settings.pruneEveryMs ?? DEFAULT_DELIVERY.pruneEveryMs);
    const before = new Date(now - retentionMs).toISOString();
    for (let batch = 0; batch < PRUNE_BATCHES && !this.#stopped; batch++)
      if ((await this.store.pruneDeliveries(before, PRUNE_BATCH)) < PRUNE_BATCH) return;
  }

  async #deliver(claim: ClaimedDelivery): Promise<void> {
    const attempt = claim.attempts + 1;
    const at = new Date();
    const started = performance.now();
    const sent = await this.#send(claim, at, attempt);
    const durationMs = performance.now() - started;
    const delivered = sent.ok;
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
    this.extras.onAttempt?.(result);
  }

  async #send(claim: ClaimedDelivery, at: Date, attempt: number): Promise<Sent> {
    let body: string;
    let parsed: ReturnType<typeof webhookBodyOf>;
    try {
      const { interruptId, type } = claim.event;
      const policy =
        interruptId !== null && type !== "run.finished" && this.extras.policyOf
          ? await this.extras.policyOf(interruptId)
          : null;
      parsed = webhookBodyOf(claim.event, this.serializer, policy);
      body = JSON.stringify(parsed);
    } catch (error) {
      return {
        ok: false,
        statusCode: null,
        error: `the event could not be encoded: ${message(error)}`,
      };
    }
    const kind = notifierKind(claim.subscription.url);
    if (kind !== null) return this.#notify(kind, claim.event.eventId, attempt, parsed);
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
      return { ok, statusCode: response.status, error: ok ? null : `HTTP ${response.status}` };
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === "TimeoutError";
      return {
        ok: false,
        statusCode: null,
        error: timedOut ? `no answer within ${this.settings.timeoutMs} ms` : message(error),
      };
    }
  }

  /** Hands the event to this process's notifier of `kind`, within the timeout. */
  async #notify(
    kind: string,
    id: string,
    attempt: number,
    body: ReturnType<typeof webhookBodyOf>,
  ): Promise<Sent> {
    const notifier = this.#notifiers.get(kind);
    // Another process may have it: this attempt fails and a later one (anywhere) retries.
    if (!notifier)
      return { ok: false, statusCode: null, error: `no "${kind}" notifier in this process` };
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        notifier.send({ id, attempt, body }),
        new Promise((_resolve, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${this.settings.timeoutMs} ms`)),
            this.settings.timeoutMs,
          );
        }),
      ]);
      return { ok: true, statusCode: null, error: null };
    } catch (error) {
      return { ok: false, statusCode: null, error: message(error) };
    } finally {
      clearTimeout(timer);
    }
  }
}

function message(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const cause =
    error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${text}${cause}`.slice(0, 500);
}
