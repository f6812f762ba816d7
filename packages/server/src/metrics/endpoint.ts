/**
 * `rein worker --metrics-port`: a process without the API still has metrics (its runs, webhook
 * deliveries and deadline resolutions). This tiny HTTP server answers `GET /metrics` with the
 * worker's registry and nothing else, in the API's error shape.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ReinMetrics } from "./recorder.ts";

/** Options of {@link serveMetrics}. */
export interface MetricsEndpointOptions {
  port: number;
  /** Default 127.0.0.1. */
  host?: string | undefined;
  /** A bearer token scrapes must send; `null`: none (loopback use). */
  token: string | null;
}

/** A running metrics endpoint. */
export interface MetricsEndpoint {
  /** `http://host:port`. */
  url: string;
  close(): Promise<void>;
}

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/** Serves `metrics` at `GET /metrics` on `port` until closed. */
export async function serveMetrics(
  metrics: ReinMetrics,
  options: MetricsEndpointOptions,
): Promise<MetricsEndpoint> {
  const expected = options.token === null ? null : digest(options.token);
  const server: Server = createServer((request, response) => {
    const refuse = (status: number, error: string, message: string): void => {
      response.writeHead(status, { "content-type": "application/json; charset=utf-8" });
      response.end(JSON.stringify({ error, message, details: {} }));
    };
    const path = (request.url ?? "").split("?")[0];
    if (request.method !== "GET" || path !== "/metrics")
      return refuse(404, "not_found", "This port serves GET /metrics only.");
    const bearer = /^Bearer ([^\s]{1,4096})$/.exec(request.headers.authorization ?? "")?.[1];
    if (expected && !(bearer !== undefined && timingSafeEqual(digest(bearer), expected)))
      return refuse(401, "unauthorized", "Send `Authorization: Bearer <metrics token>`.");
    metrics.render().then(
      (text) => {
        response.writeHead(200, { "content-type": metrics.contentType });
        response.end(text);
      },
      () => refuse(503, "store_unavailable", "The metrics could not be read; try again."),
    );
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
