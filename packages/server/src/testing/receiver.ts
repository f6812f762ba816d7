/**
 * A local webhook receiver for the tests: a real HTTP server that records every request with its
 * Standard Webhooks headers, answers as the test says (a status, or hold the request open), and
 * can go down and come back on the same port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { vi } from "vitest";

/** One request the receiver got. */
export interface ReceivedHook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** `type` of the body. */
  type: string;
  /** `data` of the body. */
  data: Record<string, unknown>;
  /** What the receiver answered (`null`: held, never answered). */
  status: number | null;
}

/** What to answer a request: a status, or `"hold"` to keep it open until the test ends. */
export type Answer = number | "hold";

/** A running receiver. */
export class TestReceiver {
  readonly received: ReceivedHook[] = [];
  /** Decides each answer; default 204. */
  answer: (hook: ReceivedHook) => Answer = () => 204;
  #server: Server;
  #port = 0;
  readonly #held = new Set<ServerResponse>();

  private constructor() {
    this.#server = this.#make();
  }

  /** Starts a receiver on a free loopback port. */
  static async start(): Promise<TestReceiver> {
    const receiver = new TestReceiver();
    await receiver.#listen(0);
    return receiver;
  }

  /** Where to subscribe. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}/hook`;
  }

  /** Requests answered 2xx. */
  get accepted(): ReceivedHook[] {
    return this.received.filter((h) => h.status !== null && h.status >= 200 && h.status < 300);
  }

  #make(): Server {
    return createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        const parsed = JSON.parse(body) as { type: string; data: Record<string, unknown> };
        const hook: ReceivedHook = {
          id: String(request.headers["webhook-id"]),
          timestamp: String(request.headers["webhook-timestamp"]),
          signature: String(request.headers["webhook-signature"]),
          body,
          type: parsed.type,
          data: parsed.data,
          status: null,
        };
        this.received.push(hook);
        const answer = this.answer(hook);
        if (answer === "hold") {
          this.#held.add(response);
          return;
        }
        hook.status = answer;
        response.writeHead(answer).end();
      });
    });
  }

  async #listen(port: number): Promise<void> {
    await new Promise<void>((done) => this.#server.listen(port, "127.0.0.1", done));
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  /** Stops listening (connections refused) until {@link TestReceiver.up}. */
  async down(): Promise<void> {
    for (const response of this.#held) response.destroy();
    this.#held.clear();
    this.#server.closeAllConnections();
    await new Promise<void>((done) => this.#server.close(() => done()));
  }

  /** Listens again on the same port. */
  async up(): Promise<void> {
    this.#server = this.#make();
    await this.#listen(this.#port);
  }

  /** Resolves once `predicate` holds (checked every 20 ms), or fails after `timeoutMs`. */
  async waitFor(
    predicate: () => boolean,
    timeoutMs = 10_000,
    what = "the webhooks",
  ): Promise<void> {
    await vi.waitFor(
      () => {
        if (!predicate()) throw new Error(`timed out waiting for ${what}`);
      },
      { timeout: timeoutMs, interval: 20 },
    );
  }

  /** Stops for good. */
  async close(): Promise<void> {
    if (this.#server.listening) await this.down();
  }
}
