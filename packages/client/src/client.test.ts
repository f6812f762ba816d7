/// <reference types="node" />
/**
 * The client stays browser-compatible (no Node imports) and parses SSE as the spec says.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BulkRefusedApiError, NotAllowedApiError, ReinApiError, ReinClient } from "./client.ts";
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

  it("turns a 403 not_allowed into a NotAllowedApiError carrying the rule and the policy", async () => {
    const policy = { groups: ["finance"], count: 2, notRequester: true };
    const rein = new ReinClient({
      baseUrl: "http://x",
      fetch: () =>
        Promise.resolve(
          Response.json(
            {
              error: "not_allowed",
              message: "alice@acme already approved; another approver is needed.",
              details: { interruptId: "i_1", rule: "already_approved", policy },
            },
            { status: 403 },
          ),
        ),
    });
    const error = await rein.resume("t", { resume: { type: "accept" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotAllowedApiError);
    expect(error).toBeInstanceOf(ReinApiError);
    const refused = error as NotAllowedApiError;
    expect([refused.status, refused.code, refused.interruptId, refused.rule]).toEqual([
      403,
      "not_allowed",
      "i_1",
      "already_approved",
    ]);
    expect(refused.policy).toEqual(policy);
  });

  it("sends decide() to POST /interrupts/decisions with its key and reads a bulk refusal's list", async () => {
    const sent: { url: string; init: RequestInit | undefined }[] = [];
    const refused = [
      { interruptId: "i_2", code: "not_allowed", message: "not in finance" },
      { interruptId: "i_3", code: "stale_target", message: "answered" },
    ];
    const rein = new ReinClient({
      baseUrl: "http://x",
      token: "t",
      fetch: (url, init) => {
        sent.push({ url: url as string, init });
        return Promise.resolve(
          Response.json(
            { error: "bulk_refused", message: "2 of 3 refused", details: { refused } },
            { status: 409 },
          ),
        );
      },
    });
    const request = { ids: ["i_1", "i_2", "i_3"], resume: { type: "accept" } };
    const error = await rein.decide(request, { idempotencyKey: "k" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BulkRefusedApiError);
    expect((error as BulkRefusedApiError).refused).toEqual(refused);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe("http://x/interrupts/decisions");
    expect(sent[0]!.init?.method).toBe("POST");
    expect(JSON.parse(sent[0]!.init?.body as string)).toEqual(request);
    expect(sent[0]!.init?.headers).toMatchObject({ "idempotency-key": "k" });
  });
});
