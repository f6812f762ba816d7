/**
 * Run events and queue changes across processes, over Postgres LISTEN/NOTIFY: the process that
 * executes a run publishes each event; a process serving a join of that run receives them.
 */
import pg from "pg";
import type { HubEvent } from "../hub.ts";

/** A message on the fan-out channel. */
export type FanoutMessage =
  | { kind: "event"; runId: string; threadId: string; event: HubEvent; done: boolean }
  | { kind: "change"; threadId: string };

/** NOTIFY payloads must stay under 8000 bytes; larger events are sent as a stub. */
const MAX_PAYLOAD = 7500;

/** One LISTEN connection per process, dispatching to subscribers. */
export class PgFanout {
  private readonly channel: string;
  private listener: pg.Client | null = null;
  private readonly runListeners = new Map<
    string,
    Set<(message: FanoutMessage & { kind: "event" }) => void>
  >();
  private readonly changeListeners = new Set<(threadId: string) => void>();
  /** Messages published in this tick, sent together by {@link PgFanout.flush}. */
  private readonly outbox: FanoutMessage[] = [];
  /** This process's id, so it can ignore its own notifications. */
  readonly origin = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

  constructor(
    private readonly pool: pg.Pool,
    private readonly connectionString: string,
    schema: string,
  ) {
    // One channel per schema, so deployments (and tests) sharing a server do not hear each other.
    this.channel = `rein_${schema}`.slice(0, 63);
  }

  /** Opens the LISTEN connection. */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    await client.connect();
    client.on("notification", (n) => {
      if (n.channel !== this.channel || !n.payload) return;
      let parsed: { origin: string; messages?: FanoutMessage[]; message?: FanoutMessage };
      try {
        parsed = JSON.parse(n.payload) as typeof parsed;
      } catch {
        return;
      }
      if (parsed.origin === this.origin) return;
      // `message`: one message per notification, as processes of earlier versions send them.
      for (const message of parsed.messages ?? (parsed.message ? [parsed.message] : [])) {
        if (message.kind === "change") for (const l of this.changeListeners) l(message.threadId);
        else for (const l of this.runListeners.get(message.runId) ?? []) l(message);
      }
    });
    client.on("error", () => undefined);
    await client.query(`LISTEN "${this.channel}"`);
    this.listener = client;
  }

  /**
   * Publishes a message to every other process. Messages published in one tick of the event loop
   * go out together, packed into as few notifications as fit, in one query: a resume emits
   * several events, and each `NOTIFY` takes Postgres's global notification lock at commit, so one
   * notification per event made concurrent resumes queue behind each other. Failures are
   * dropped: joiners also poll.
   */
  publish(message: FanoutMessage): void {
    this.outbox.push(message);
    if (this.outbox.length === 1) setImmediate(() => this.flush());
  }

  private flush(): void {
    const messages = this.outbox.splice(0);
    const payloads: string[] = [];
    let batch: string[] = [];
    let size = 0;
    const close = (): void => {
      if (batch.length > 0) payloads.push(this.envelope(batch));
      batch = [];
      size = 0;
    };
    for (const message of messages) {
      const text = this.encode(message);
      // The envelope and a separator per message stay well inside the margin below the limit.
      if (size + text.length + 64 > MAX_PAYLOAD) close();
      batch.push(text);
      size += text.length + 1;
    }
    close();
    this.pool
      .query("SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload", [
        this.channel,
        payloads,
      ])
      .catch(() => undefined);
  }

  /** One message as JSON, with an event too large for a notification replaced by a stub. */
  private encode(message: FanoutMessage): string {
    const text = JSON.stringify(message);
    if (text.length + 64 <= MAX_PAYLOAD || message.kind !== "event") return text;
    return JSON.stringify({
      ...message,
      event: { ...message.event, data: { truncated: true, type: message.event.event } },
    });
  }

  private envelope(encoded: string[]): string {
    return `{"origin":${JSON.stringify(this.origin)},"messages":[${encoded.join(",")}]}`;
  }

  /** Receives the events of one run published by other processes. */
  subscribeRun(
    runId: string,
    listener: (message: FanoutMessage & { kind: "event" }) => void,
  ): () => void {
    let set = this.runListeners.get(runId);
    if (!set) this.runListeners.set(runId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.runListeners.delete(runId);
    };
  }

  /** Receives "this thread's queue may have changed" from other processes. */
  onChange(listener: (threadId: string) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Closes the LISTEN connection. */
  async stop(): Promise<void> {
    const client = this.listener;
    this.listener = null;
    await client?.end().catch(() => undefined);
  }
}
