/**
 * A local stand-in for Slack in the tests: a real HTTP server that answers the Web API methods
 * Rein calls (`chat.postMessage`, `chat.update`) with Slack's documented response shapes
 * (`{ ok: true, channel, ts, message }`, `{ ok: false, error }`, HTTP 429 with `Retry-After`),
 * and records them, with the `response_url` replies it receives under `/actions/…`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { vi } from "vitest";

/** One call the stub received. */
export interface SlackCall {
  /** `chat.postMessage`, `chat.update`, or `response_url`. */
  method: string;
  /** The `Authorization` header. */
  authorization: string | undefined;
  body: Record<string, unknown>;
  /** What the stub answered (a success's JSON), once answered. */
  answer?: Record<string, unknown>;
}

/** A scripted failure for the next Web API call: an HTTP status, or Slack's `ok: false`. */
export type SlackFailure =
  { status: 500 | 503 } | { status: 429; retryAfter: number } | { error: string };

/** A running stub. */
export class SlackStub {
  readonly calls: SlackCall[] = [];
  /** Failures answered to the next Web API calls, in order (then success). */
  readonly failures: SlackFailure[] = [];
  readonly #server: Server;
  #url = "";
  #ts = 1_700_000_000;

  private constructor() {
    this.#server = createServer((request, response) => this.#handle(request, response));
  }

  /** Starts a stub on a free loopback port. */
  static async start(): Promise<SlackStub> {
    const stub = new SlackStub();
    await new Promise<void>((resolve) => stub.#server.listen(0, "127.0.0.1", resolve));
    stub.#url = `http://127.0.0.1:${(stub.#server.address() as AddressInfo).port}`;
    return stub;
  }

  /** The Web API base URL (the notifier's `apiUrl`). */
  get apiUrl(): string {
    return `${this.#url}/api`;
  }

  /** A `response_url` as Slack hands one out with an interaction. */
  responseUrl(id: string): string {
    return `${this.#url}/actions/T0001/${id}`;
  }

  /** The calls of one method. */
  of(method: string): SlackCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Waits until `count` calls of `method` arrived (fails after `ms`). */
  waitFor(method: string, count = 1, ms = 5_000): Promise<SlackCall[]> {
    return vi.waitFor(
      () => {
        const calls = this.of(method);
        if (calls.length >= count) return calls;
        throw new Error(`Slack stub: ${count} ${method} call(s) expected, got ${calls.length}`);
      },
      { timeout: ms, interval: 10 },
    );
  }

  /** Stops the stub. */
  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #handle(request: IncomingMessage, response: ServerResponse): void {
    let text = "";
    request.on("data", (chunk: Buffer) => (text += chunk.toString()));
    request.on("end", () => {
      const path = request.url ?? "";
      const method = path.startsWith("/actions/") ? "response_url" : path.replace(/^\/api\//, "");
      const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
      const call: SlackCall = { method, authorization: request.headers.authorization, body };
      this.calls.push(call);
      if (method === "response_url") return this.#send(response, 200, "ok", "text/plain");
      const failure = this.failures.shift();
      if (failure && "status" in failure) {
        if (failure.status === 429) response.setHeader("retry-after", String(failure.retryAfter));
        return this.#send(
          response,
          failure.status,
          JSON.stringify({ ok: false, error: "ratelimited" }),
        );
      }
      if (failure)
        return this.#send(response, 200, JSON.stringify({ ok: false, error: failure.error }));
      call.answer = this.#answer(method, body);
      this.#send(response, 200, JSON.stringify(call.answer));
    });
  }

  #answer(method: string, body: Record<string, unknown>): Record<string, unknown> {
    const channel = String(body["channel"]);
    if (method === "chat.postMessage") {
      this.#ts += 1;
      const ts = `${this.#ts}.000100`;
      return {
        ok: true,
        channel: channel.startsWith("C") ? channel : "C0APPROVALS",
        ts,
        message: {
          type: "message",
          subtype: "bot_message",
          text: body["text"],
          ts,
          bot_id: "B0REIN",
          blocks: body["blocks"],
        },
      };
    }
    if (method === "chat.update")
      return {
        ok: true,
        channel,
        ts: body["ts"],
        text: body["text"],
        message: { text: body["text"] },
      };
    return { ok: false, error: "unknown_method" };
  }

  #send(response: ServerResponse, status: number, text: string, type = "application/json"): void {
    response.writeHead(status, { "content-type": type });
    response.end(text);
  }
}
