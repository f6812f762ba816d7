/**
 * The typed client: one method per endpoint of Rein's HTTP API, SSE streams as async iterables.
 * It uses `fetch` only, so the same code runs in a browser (the console) and in Node (the CLI).
 */
import { readSseFrames } from "./sse.ts";
import type {
  ApprovalPolicy,
  AuditRecord,
  BulkRefusal,
  DecisionsRequest,
  DecisionsResult,
  AuditExportLine,
  AuditVerification,
  ErrorBody,
  Health,
  Readiness,
  InterruptPage,
  NotAllowedRule,
  Page,
  ResumeRequest,
  Run,
  RunAccepted,
  RunResult,
  RunStreamEvent,
  RunTree,
  StartRunRequest,
  StateSnapshot,
  SteeringRecord,
  StreamMode,
  Target,
  Thread,
  Webhook,
  WebhookDelivery,
  WebhookEventType,
  CreatedWebhook,
  DecisionLink,
  RotatedWebhook,
  Whoami,
  AuthSettings,
  ApiKey,
  CreatedApiKey,
} from "./types.ts";

/** Options of {@link ReinClient}. */
export interface ReinClientOptions {
  /** Base URL of the server, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Bearer token; omit for a server in open mode. */
  token?: string;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

/**
 * An error response of the API: `status` is the HTTP status, `code` the stable Rein error code
 * (`stale_target`, `invalid_answer`, ...), `details` what to act on (a 409 carries the latest
 * metadata of the thread).
 */
export class ReinApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(status: number, body: ErrorBody) {
    super(body.message);
    this.name = "ReinApiError";
    this.status = status;
    this.code = body.error;
    this.details = body.details;
  }

  /** True for 409 `stale_target`: re-read the thread (see `details`) and decide again. */
  get stale(): boolean {
    return this.code === "stale_target";
  }

  /** True when retrying the same request later may succeed (503, busy thread). */
  get retryable(): boolean {
    return this.status === 503 || this.code === "thread_busy";
  }
}

/**
 * The rules the client knows, as a runtime set: the client imports core's types only (nothing of
 * core is bundled), so the names are listed here, and a rule core adds or drops fails to compile
 * until this record matches its one declaration (`NotAllowedRuleName`).
 */
const RULES: Readonly<Record<NotAllowedRule, true>> = {
  not_listed: true,
  requester: true,
  already_approved: true,
  no_principal: true,
};

/** Whether `rule` is a rule this client knows. */
function knownRule(rule: unknown): rule is NotAllowedRule {
  return typeof rule === "string" && Object.hasOwn(RULES, rule);
}

/**
 * 403 `not_allowed`: the interrupt's approval policy refused this principal's answer, and nothing
 * was stored. `rule` says why (`not_listed`: not among the policy's subjects, groups or roles;
 * `requester`: the run's requester may not approve; `already_approved`: this principal's approval
 * is already counted; `no_principal`: the answer carried no principal), `policy` who may.
 */
export class NotAllowedApiError extends ReinApiError {
  readonly interruptId: string;
  readonly rule: NotAllowedRule;
  readonly policy: ApprovalPolicy;

  constructor(status: number, body: ErrorBody) {
    super(status, body);
    this.name = "NotAllowedApiError";
    const { interruptId, rule, policy } = body.details;
    this.interruptId = typeof interruptId === "string" ? interruptId : "";
    // An unknown rule (a newer server) reads as the generic one rather than failing the caller.
    this.rule = knownRule(rule) ? rule : "not_listed";
    this.policy = typeof policy === "object" && policy !== null ? policy : {};
  }
}

/**
 * 409 `bulk_refused` of `POST /interrupts/decisions`: at least one selected interrupt was not
 * pending, not found or not allowed, so none was decided. `refused` lists each one and why.
 */
export class BulkRefusedApiError extends ReinApiError {
  readonly refused: BulkRefusal[];

  constructor(status: number, body: ErrorBody) {
    super(status, body);
    this.name = "BulkRefusedApiError";
    const refused = body.details["refused"];
    this.refused = Array.isArray(refused) ? (refused as BulkRefusal[]) : [];
  }
}

/** The error class of an error response: the typed ones where the code has one. */
export function apiErrorOf(status: number, body: ErrorBody): ReinApiError {
  if (body.error === "not_allowed") return new NotAllowedApiError(status, body);
  if (body.error === "bulk_refused") return new BulkRefusedApiError(status, body);
  return new ReinApiError(status, body);
}

/**
 * Every endpoint the client calls, as `METHOD /openapi/path`. A test checks it against the
 * server's OpenAPI document, both ways.
 */
export const clientRoutes = [
  "GET /healthz",
  "GET /readyz",
  "GET /openapi.json",
  "GET /metrics",
  "POST /threads",
  "GET /threads",
  "GET /threads/{id}",
  "GET /threads/{id}/state",
  "GET /threads/{id}/history",
  "DELETE /threads/{id}",
  "POST /threads/{id}/runs",
  "GET /threads/{id}/runs",
  "GET /threads/{id}/runs/{runId}",
  "POST /threads/{id}/runs/stream",
  "GET /threads/{id}/runs/{runId}/stream",
  "GET /interrupts",
  "GET /interrupts/stream",
  "POST /threads/{id}/resume",
  "POST /threads/{id}/steer",
  "POST /interrupts/decisions",
  "GET /audit",
  "GET /audit/verify",
  "GET /audit/export",
  "GET /whoami",
  "GET /auth/config",
  "POST /api-keys",
  "GET /api-keys",
  "DELETE /api-keys/{id}",
  "POST /webhooks",
  "GET /webhooks",
  "DELETE /webhooks/{id}",
  "POST /webhooks/{id}/rotate",
  "GET /webhooks/{id}/deliveries",
  "POST /interrupts/{id}/links",
] as const;

type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

const enc = encodeURIComponent;

function queryString(query: Query): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value as readonly string[]) params.append(key, v);
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** A client of one Rein server. */
export class ReinClient {
  private readonly baseUrl: string;
  private readonly token: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ReinClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.token = options.token;
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  // Meta ----------------------------------------------------------------------------------------

  /** `GET /healthz`. */
  health(): Promise<Health> {
    return this.json("GET", "/healthz");
  }

  /**
   * `GET /readyz`: whether the server can take traffic (a store round trip, migrations applied,
   * on Postgres its listener). A 503 is an answer here, not an error: `ready` is false and
   * `reason` says why.
   */
  async readiness(): Promise<Readiness> {
    const response = await this.fetchImpl(`${this.baseUrl}/readyz`);
    return (await response.json()) as Readiness;
  }

  /** `GET /openapi.json`: the server's OpenAPI 3.1 document. */
  openapi(): Promise<Record<string, unknown>> {
    return this.json("GET", "/openapi.json");
  }

  /**
   * `GET /metrics`: the server's metrics in the Prometheus text format (the client's token needs
   * the `metrics` scope, or is the server's metrics token). See docs/metrics.md.
   */
  async metrics(): Promise<string> {
    return (await this.request("GET", "/metrics")).text();
  }

  /** `GET /whoami`: the token's subject, tenant, scopes, and the groups and roles policies match. */
  whoami(): Promise<Whoami> {
    return this.json("GET", "/whoami");
  }

  /**
   * `GET /auth/config` (no token needed): how a browser signs in — the OpenID issuer, the
   * console's client id, the audience and scopes to ask for — or `{ oidc: null }`.
   */
  authSettings(): Promise<AuthSettings> {
    return this.json("GET", "/auth/config");
  }

  // API keys ------------------------------------------------------------------------------------

  /**
   * `POST /api-keys` (admin): a key of your tenant for a machine; `key` is shown only here (the
   * server keeps its SHA-256).
   */
  createApiKey(request: {
    name: string;
    scopes: ApiKey["scopes"];
    tenant?: string;
    expiresAt?: string;
  }): Promise<CreatedApiKey> {
    return this.json("POST", "/api-keys", request);
  }

  /** `GET /api-keys` (admin): your tenant's keys, never their secrets. */
  async listApiKeys(): Promise<ApiKey[]> {
    return (await this.json<{ items: ApiKey[] }>("GET", "/api-keys")).items;
  }

  /** `DELETE /api-keys/:id` (admin): revokes a key; every server refuses it from then on. */
  revokeApiKey(id: string): Promise<ApiKey> {
    return this.json("DELETE", `/api-keys/${enc(id)}`);
  }

  // Threads -------------------------------------------------------------------------------------

  /** `POST /threads`: a new thread of a registered graph. */
  createThread(request: {
    graph: string;
    threadId?: string;
    metadata?: Record<string, unknown>;
  }): Promise<Thread> {
    return this.json("POST", "/threads", request);
  }

  /** `GET /threads`: threads of the token's tenant, newest first. */
  listThreads(query: { cursor?: string; limit?: number } = {}): Promise<Page<Thread>> {
    return this.json("GET", `/threads${queryString(query)}`);
  }

  /** `GET /threads/:id`: status, head run and checkpoint, pending interrupts. */
  getThread(threadId: string): Promise<Thread> {
    return this.json("GET", `/threads/${enc(threadId)}`);
  }

  /** `GET /threads/:id/state`. */
  getState(
    threadId: string,
    query: { subgraphs?: boolean; checkpointId?: string } = {},
  ): Promise<StateSnapshot> {
    return this.json(
      "GET",
      `/threads/${enc(threadId)}/state${queryString({
        subgraphs: query.subgraphs === undefined ? undefined : String(query.subgraphs),
        checkpointId: query.checkpointId,
      })}`,
    );
  }

  /** `GET /threads/:id/history`: checkpoints newest first. */
  getHistory(
    threadId: string,
    query: { limit?: number; before?: string } = {},
  ): Promise<{ items: StateSnapshot[] }> {
    return this.json("GET", `/threads/${enc(threadId)}/history${queryString(query)}`);
  }

  /** `DELETE /threads/:id` (admin scope). */
  async deleteThread(threadId: string): Promise<void> {
    await this.request("DELETE", `/threads/${enc(threadId)}`);
  }

  // Runs ----------------------------------------------------------------------------------------

  /** `POST /threads/:id/runs` with `wait: true`: the run's result. */
  startRun(
    threadId: string,
    request: StartRunRequest & { wait: true },
    options?: { idempotencyKey?: string },
  ): Promise<RunResult>;
  /** `POST /threads/:id/runs` in the background: the run id (202). */
  startRun(
    threadId: string,
    request: StartRunRequest & { wait?: false },
    options?: { idempotencyKey?: string },
  ): Promise<RunAccepted>;
  startRun(
    threadId: string,
    request: StartRunRequest & { wait?: boolean },
    options: { idempotencyKey?: string } = {},
  ): Promise<RunResult | RunAccepted> {
    return this.json("POST", `/threads/${enc(threadId)}/runs`, request, idempotency(options));
  }

  /** `GET /threads/:id/runs`: root and child runs, oldest first. */
  listRuns(threadId: string): Promise<{ items: Run[] }> {
    return this.json("GET", `/threads/${enc(threadId)}/runs`);
  }

  /** `GET /threads/:id/runs/:runId`: a run with its run tree. */
  getRun(threadId: string, runId: string): Promise<RunTree> {
    return this.json("GET", `/threads/${enc(threadId)}/runs/${enc(runId)}`);
  }

  /** `POST /threads/:id/runs/stream`: starts a run and yields its events until `end`. */
  streamRun(
    threadId: string,
    request: StartRunRequest,
    options: { signal?: AbortSignal; idempotencyKey?: string } = {},
  ): AsyncIterable<RunStreamEvent> {
    return this.events(
      "POST",
      `/threads/${enc(threadId)}/runs/stream`,
      request,
      idempotency(options),
      options.signal,
    );
  }

  /**
   * `GET /threads/:id/runs/:runId/stream`: joins a run's events. Pass the last event id you saw
   * to resume after it.
   */
  joinRun(
    threadId: string,
    runId: string,
    options: {
      streamMode?: StreamMode[];
      lastEventId?: number | string;
      signal?: AbortSignal;
    } = {},
  ): AsyncIterable<RunStreamEvent> {
    return this.events(
      "GET",
      `/threads/${enc(threadId)}/runs/${enc(runId)}/stream${queryString({ streamMode: options.streamMode })}`,
      undefined,
      options.lastEventId === undefined ? {} : { "last-event-id": String(options.lastEventId) },
      options.signal,
    );
  }

  // Interrupts, answers, steering, audit ----------------------------------------------------------

  /**
   * `GET /interrupts`: the approval queue, newest first, with `total` (how many match on all
   * pages). `graph` is the app (the root graph: every question of its run tree);
   * `subAgentGraph` the graph of the run that asked.
   */
  listInterrupts(
    query: {
      status?: "pending" | "answered" | "cancelled" | "superseded";
      graph?: string;
      subAgentGraph?: string;
      threadId?: string;
      cursor?: string;
      limit?: number;
    } = {},
  ): Promise<InterruptPage> {
    return this.json("GET", `/interrupts${queryString(query)}`);
  }

  /**
   * `GET /interrupts/stream`: the first page of pending interrupts now and each time it changes,
   * until `signal` aborts.
   */
  async *watchInterrupts(
    query: { graph?: string; subAgentGraph?: string; threadId?: string; limit?: number } = {},
    options: { signal?: AbortSignal } = {},
  ): AsyncIterable<InterruptPage> {
    for await (const event of this.events(
      "GET",
      `/interrupts/stream${queryString(query)}`,
      undefined,
      {},
      options.signal,
    ) as AsyncIterable<{ event: string; data: unknown }>) {
      if (event.event === "interrupts") yield event.data as InterruptPage;
    }
  }

  /**
   * `POST /threads/:id/resume`: answers pending interrupts and continues the run. With an
   * `idempotencyKey`, a retry returns the first outcome.
   *
   * A partial approval (the first of two an approval policy needs) answers like any resume; the
   * interrupt stays pending with one more entry in `approval.approvals`.
   *
   * @throws ReinApiError 409 `stale_target` (with the latest metadata), 422 `invalid_answer`.
   * @throws NotAllowedApiError 403 `not_allowed` when the policy refuses this token.
   */
  resume(
    threadId: string,
    request: ResumeRequest,
    options: { idempotencyKey?: string } = {},
  ): Promise<RunResult> {
    return this.json("POST", `/threads/${enc(threadId)}/resume`, request, idempotency(options));
  }

  /**
   * `POST /interrupts/decisions`: one decision (`resume`) applied to each interrupt of a list of
   * ids, or of a filter whose match count must be `expectedCount`. All or nothing: each
   * interrupt is checked as if answered alone, and one refusal decides none. With an
   * `idempotencyKey`, a retry returns the first outcome.
   *
   * @throws BulkRefusedApiError 409 `bulk_refused`, listing each refused interrupt and why.
   * @throws ReinApiError 409 `count_mismatch` (`details.expected`, `details.actual`) when the
   *   filter matches another number of interrupts.
   */
  decide(
    request: DecisionsRequest,
    options: { idempotencyKey?: string } = {},
  ): Promise<DecisionsResult> {
    return this.json("POST", "/interrupts/decisions", request, idempotency(options));
  }

  /** `POST /threads/:id/steer`: records an instruction without resuming. */
  steer(threadId: string, request: { text: string; target?: Target }): Promise<SteeringRecord> {
    return this.json("POST", `/threads/${enc(threadId)}/steer`, request);
  }

  /** `GET /audit`: audit lines of the token's tenant, oldest first. */
  listAudit(
    query: { threadId?: string; cursor?: string; limit?: number } = {},
  ): Promise<Page<AuditRecord>> {
    return this.json("GET", `/audit${queryString(query)}`);
  }

  /**
   * `GET /audit/verify`: re-computes the audit log's hash chains (the token's tenant; one thread
   * with `threadId`) and reports the first broken link.
   */
  verifyAudit(query: { threadId?: string; tenant?: string } = {}): Promise<AuditVerification> {
    return this.json("GET", `/audit/verify${queryString(query)}`);
  }

  /** `GET /audit/export`: the audit lines with their hashes, one by one (JSON Lines). */
  async *exportAudit(
    query: { threadId?: string; tenant?: string } = {},
    signal?: AbortSignal,
  ): AsyncIterable<AuditExportLine> {
    const response = await this.request(
      "GET",
      `/audit/export${queryString(query)}`,
      undefined,
      { accept: "application/jsonl" },
      signal,
    );
    if (!response.body) return;
    for await (const line of readLines(response.body)) {
      if (line.trim() !== "") yield JSON.parse(line) as AuditExportLine;
    }
  }

  // Webhooks ------------------------------------------------------------------------------------

  /**
   * `POST /interrupts/:id/links` (admin): signed, single-use decision links of a pending question
   * for one principal, one per decision it offers (none for a plain question). `ttl`: `90s`,
   * `15m`, `12h`, `3d` or seconds; default the server's. See docs/notifications.md.
   */
  async createDecisionLinks(
    interruptId: string,
    request: {
      principal: { subject: string; groups?: string[]; roles?: string[] };
      ttl?: string | number;
    },
  ): Promise<DecisionLink[]> {
    return (
      await this.json<{ links: DecisionLink[] }>(
        "POST",
        `/interrupts/${enc(interruptId)}/links`,
        request,
      )
    ).links;
  }

  /** `POST /webhooks` (admin): subscribes `url` to events of your tenant; keep the secret. */
  createWebhook(request: {
    url: string;
    events: WebhookEventType[];
    graphs?: string[];
  }): Promise<CreatedWebhook> {
    return this.json("POST", "/webhooks", request);
  }

  /** `GET /webhooks` (admin): your tenant's subscriptions. */
  async listWebhooks(): Promise<Webhook[]> {
    return (await this.json<{ items: Webhook[] }>("GET", "/webhooks")).items;
  }

  /** `DELETE /webhooks/:id` (admin). */
  async deleteWebhook(id: string): Promise<void> {
    await this.json("DELETE", `/webhooks/${enc(id)}`);
  }

  /** `POST /webhooks/:id/rotate` (admin): a new secret; the old one signs too for the grace. */
  rotateWebhookSecret(
    id: string,
    request: { graceSeconds?: number } = {},
  ): Promise<RotatedWebhook> {
    return this.json("POST", `/webhooks/${enc(id)}/rotate`, request);
  }

  /** `GET /webhooks/:id/deliveries` (admin): newest first, with their attempts. */
  async listWebhookDeliveries(
    id: string,
    query: { limit?: number } = {},
  ): Promise<WebhookDelivery[]> {
    const page = await this.json<{ items: WebhookDelivery[] }>(
      "GET",
      `/webhooks/${enc(id)}/deliveries${queryString(query)}`,
    );
    return page.items;
  }

  // Plumbing --------------------------------------------------------------------------------------

  private async request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<Response> {
    const response = await this.fetchImpl(this.baseUrl + path, {
      method,
      headers: {
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      ...(signal ? { signal } : {}),
    });
    if (!response.ok) {
      const text = await response.text();
      let parsed: ErrorBody;
      try {
        parsed = JSON.parse(text) as ErrorBody;
      } catch {
        parsed = {
          error: "http_error",
          message: text.slice(0, 500) || response.statusText,
          details: {},
        };
      }
      throw apiErrorOf(response.status, parsed);
    }
    return response;
  }

  private async json<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const response = await this.request(method, path, body, headers);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private async *events(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
  ): AsyncIterable<RunStreamEvent> {
    const response = await this.request(
      method,
      path,
      body,
      { accept: "text/event-stream", ...headers },
      signal,
    );
    if (!response.body) return;
    for await (const frame of readSseFrames(response.body)) {
      const id = frame.id === null || !/^\d+$/.test(frame.id) ? frame.id : Number(frame.id);
      yield { id, event: frame.event, data: JSON.parse(frame.data) as unknown } as RunStreamEvent;
    }
  }
}

/** The lines of a UTF-8 body, without their line breaks. */
async function* readLines(body: ReadableStream<Uint8Array>): AsyncIterable<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffered = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffered += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let end = buffered.indexOf("\n");
      while (end >= 0) {
        yield buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        end = buffered.indexOf("\n");
      }
      if (done) break;
    }
    if (buffered !== "") yield buffered;
  } finally {
    reader.releaseLock();
  }
}

function idempotency(options: { idempotencyKey?: string }): Record<string, string> {
  return options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {};
}
