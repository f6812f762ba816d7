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
      let parsed: { origin: string; message: FanoutMessage };
      try {
        parsed = JSON.parse(n.payload) as { origin: string; message: FanoutMessage };
      } catch {
        return;
      }
      if (parsed.origin === this.origin) return;
      const message = parsed.message;
      if (message.kind === "change") for (const l of this.changeListeners) l(message.threadId);
      else for (const l of this.runListeners.get(message.runId) ?? []) l(message);
    });
    client.on("error", () => undefined);
    await client.query(`LISTEN "${this.channel}"`);
    this.listener = client;
  }

  /** Publishes a message to every other process. Failures are dropped: joiners also poll. */
  publish(message: FanoutMessage): void {
    let payload = JSON.stringify({ origin: this.origin, message });
    if (payload.length > MAX_PAYLOAD && message.kind === "event")
      payload = JSON.stringify({
        origin: this.origin,
        message: {
          ...message,
          event: { ...message.event, data: { truncated: true, type: message.event.event } },
        },
      });
    this.pool.query("SELECT pg_notify($1, $2)", [this.channel, payload]).catch(() => undefined);
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
