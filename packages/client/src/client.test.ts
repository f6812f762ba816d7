/// <reference types="node" />
/**
 * The client stays browser-compatible (no Node imports) and parses SSE as the spec says.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ReinApiError, ReinClient } from "./client.ts";
import { readSseFrames } from "./sse.ts";

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

describe("@rein/client", () => {
  it("imports nothing from Node, so it bundles for browsers", () => {
    const dir = import.meta.dirname;
    for (const file of readdirSync(dir).filter(
      (f) => f.endsWith(".ts") && !f.endsWith(".test.ts"),
    )) {
      const text = readFileSync(join(dir, file), "utf8");
      expect(text, file).not.toMatch(/from "node:|require\(|process\.|Buffer/);
      for (const [, spec] of text.matchAll(/^import (?!type)[^;]*from "([^"]+)"/gm))
        expect(spec, file).toMatch(/^\.\//);
    }
  });

  it("parses frames split across chunks, skips pings, joins data lines, honours CRLF", async () => {
    const frames = [];
    for await (const frame of readSseFrames(
      streamOf([
        ": ping\n\nid: 1\nevent: cus",
        'tom\ndata: {"a":1}\n\n',
        "data: x\r\ndata: y\r\n\r\n",
      ]),
    ))
      frames.push(frame);
    expect(frames).toEqual([
      { id: "1", event: "custom", data: '{"a":1}' },
      { id: null, event: "message", data: "x\ny" },
    ]);
  });

  it("turns an error response into a ReinApiError with code, status and details", async () => {
    const fetchStub: typeof fetch = () =>
      Promise.resolve(
        new Response(
          JSON.stringify({
            error: "stale_target",
            message: "gone",
            details: { headCheckpointId: "c9" },
          }),
          {
            status: 409,
          },
        ),
      );
    const rein = new ReinClient({ baseUrl: "http://x/", token: "t", fetch: fetchStub });
    const error = (await rein.getThread("a/b").catch((e: unknown) => e)) as ReinApiError;
    expect(error).toBeInstanceOf(ReinApiError);
    expect([error.status, error.code, error.stale, error.details]).toEqual([
      409,
      "stale_target",
      true,
      { headCheckpointId: "c9" },
    ]);
  });
});
