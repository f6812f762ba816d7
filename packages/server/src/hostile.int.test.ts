/**
 * Hostile input over real HTTP, on SQLite and Postgres: malformed bodies, wrong types, huge and
 * deep payloads, unknown ids, NUL bytes, unpaired surrogates, 10 KB ids, prototype keys. Every
 * request gets a 4xx JSON error — never a 5xx — and the store is byte-for-byte unchanged.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Interrupt } from "@rein/core";
import {
  TOKENS,
  client,
  postgresBackend,
  serveOn,
  snapshotStore,
  sqliteBackend,
  type Backend,
} from "./testing/harness.ts";

/** A request: method, path, body (a string is sent as is), extra headers. */
type Case = [
  name: string,
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
];

const deep = (n: number): string => "[".repeat(n) + "]".repeat(n);
const longId = "a".repeat(10_000);

function cases(i: Interrupt): Case[] {
  const target = { runId: i.runId, namespace: i.namespace };
  return [
    ["truncated JSON", "POST", "/threads", '{"graph":'],
    ["JSON array body", "POST", "/threads", "[1,2,3]"],
    ["JSON string body", "POST", "/threads", '"desk"'],
    ["empty body", "POST", "/threads", ""],
    ["text/plain body", "POST", "/threads", "graph=desk", { "content-type": "text/plain" }],
    ["graph is a number", "POST", "/threads", { graph: 5 }],
    ["unknown field", "POST", "/threads", { graph: "desk", admin: true }],
    ["metadata is an array", "POST", "/threads", { graph: "desk", metadata: [1] }],
    ["__proto__ key", "POST", "/threads", '{"graph":"desk","__proto__":{"polluted":1}}'],
    [
      "constructor.prototype key",
      "POST",
      "/threads",
      '{"graph":"desk","constructor":{"prototype":{"polluted":1}}}',
    ],
    [
      "__proto__ inside input",
      "POST",
      "/threads/t-h/runs",
      '{"input":{"__proto__":{"admin":true}}}',
    ],
    ["NUL in a thread id", "POST", "/threads", { graph: "desk", threadId: "a\u0000b" }],
    [
      "unpaired surrogate in a thread id",
      "POST",
      "/threads",
      '{"graph":"desk","threadId":"\\ud800x"}',
    ],
    ["10 KB thread id", "POST", "/threads", { graph: "desk", threadId: longId }],
    ["control characters in an id", "POST", "/threads", { graph: "desk", threadId: "a\nb" }],
    ["NUL in a path id", "GET", "/threads/a%00b"],
    ["invalid UTF-8 in a path", "GET", "/threads/%ED%A0%80"],
    ["10 KB path id", "GET", `/threads/${longId}`],
    ["10 KB run id", "GET", `/threads/t-h/runs/${longId}`],
    ["unknown thread", "GET", "/threads/nope"],
    ["unknown thread state", "GET", "/threads/nope/state"],
    ["unknown run", "GET", "/threads/t-h/runs/nope"],
    ["join unknown run", "GET", "/threads/t-h/runs/nope/stream"],
    ["resume unknown thread", "POST", "/threads/nope/resume", { resume: 1 }],
    [
      "resume unknown run",
      "POST",
      "/threads/t-h/resume",
      { target: { runId: "nope", namespace: [] }, resume: 1 },
    ],
    ["resume unknown interrupt id", "POST", "/threads/t-h/resume", { resumeMap: { i_nope: 1 } }],
    ["resume with both forms", "POST", "/threads/t-h/resume", { target, resume: 1, resumeMap: {} }],
    ["resume with neither form", "POST", "/threads/t-h/resume", { target }],
    ["resumeMap is a string", "POST", "/threads/t-h/resume", { resumeMap: "x" }],
    [
      "target runId is a number",
      "POST",
      "/threads/t-h/resume",
      { target: { runId: 5 }, resume: 1 },
    ],
    [
      "namespace is a string",
      "POST",
      "/threads/t-h/resume",
      { target: { runId: i.runId, namespace: "x" }, resume: 1 },
    ],
    [
      "answer fails its schema",
      "POST",
      "/threads/t-h/resume",
      { target, resume: { type: "launch-missiles" } },
    ],
    ["answer with a NUL", "POST", "/threads/t-h/resume", { target, resume: { type: "\u0000" } }],
    [
      "pendingChildren unknown",
      "POST",
      "/threads/t-h/resume",
      { target, resume: { type: "accept" }, pendingChildren: "explode" },
    ],
    [
      "stale expectedCheckpointId",
      "POST",
      "/threads/t-h/resume",
      { target, resume: { type: "accept" }, expectedCheckpointId: "000000000000-000000-000000" },
    ],
    [
      "Idempotency-Key with control characters",
      "POST",
      "/threads/t-h/resume",
      { target, resume: { type: "accept" } },
      { "idempotency-key": "a\tb" },
    ],
    [
      "Idempotency-Key of 10 KB",
      "POST",
      "/threads/t-h/resume",
      { target, resume: { type: "accept" } },
      { "idempotency-key": longId },
    ],
    ["input is a string", "POST", "/threads/t-h/runs", { input: "go" }],
    ["input is an array", "POST", "/threads/t-h/runs", { input: [1] }],
    ["input and command", "POST", "/threads/t-h/runs", { input: {}, command: { resume: 1 } }],
    [
      "input to a paused thread",
      "POST",
      "/threads/t-h/runs",
      { input: { ticket: "x" }, wait: true },
    ],
    [
      "input for an unknown channel",
      "POST",
      "/threads/t-h/runs",
      { input: { nope: 1 }, onPending: "cancel", wait: true },
    ],
    ["wait is a string", "POST", "/threads/t-h/runs", { input: {}, wait: "yes" }],
    [
      "unknown stream mode",
      "POST",
      "/threads/t-h/runs/stream",
      { input: {}, streamMode: "everything" },
    ],
    [
      "interruptBefore is a string",
      "POST",
      "/threads/t-h/runs",
      { input: {}, interruptBefore: "ask" },
    ],
    ["10,000-deep input", "POST", "/threads/t-h/runs", `{"input":{"x":${deep(10_000)}}}`],
    ["100-deep answer", "POST", "/threads/t-h/resume", `{"resume":${deep(100)}}`],
    ["2 MB input", "POST", "/threads/t-h/runs", { input: { blob: "x".repeat(2 * 1024 * 1024) } }],
    ["empty steering text", "POST", "/threads/t-h/steer", { text: "" }],
    ["steering text is an object", "POST", "/threads/t-h/steer", { text: { a: 1 } }],
    [
      "steer an unknown run",
      "POST",
      "/threads/t-h/steer",
      { target: { runId: "nope", namespace: [] }, text: "x" },
    ],
    ["limit is negative", "GET", "/interrupts?limit=-1"],
    ["limit is text", "GET", "/interrupts?limit=abc"],
    ["limit is huge", "GET", "/interrupts?limit=1e9"],
    ["status is unknown", "GET", "/interrupts?status=bogus"],
    ["__proto__ in the query", "GET", "/interrupts?__proto__=x"],
    ["garbage cursor", "GET", "/interrupts?cursor=%00%01garbage"],
    ["garbage audit cursor", "GET", "/audit?cursor=not-a-cursor"],
    ["garbage threads cursor", "GET", "/threads?cursor=%FF%FE"],
    ["history before a 10 KB id", "GET", `/threads/t-h/history?before=${longId}`],
    ["subgraphs is a number", "GET", "/threads/t-h/state?subgraphs=1"],
    ["unknown route", "GET", "/nope"],
    ["unknown method", "PUT", "/threads/t-h"],
    [
      "huge Authorization header",
      "GET",
      "/threads/t-h",
      undefined,
      { authorization: `Bearer ${"x".repeat(8000)}` },
    ],
  ];
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`hostile input on ${backend.name}`, () => {
    const served = serveOn(backend, {}, "all");
    let pending: Interrupt;
    let alice: ReturnType<typeof client>;

    beforeAll(async () => {
      alice = client(served.url, TOKENS["alice"]!.token);
      await alice("POST", "/threads", { graph: "desk", threadId: "t-h" });
      const run = await alice<{ interrupts: Interrupt[] }>("POST", "/threads/t-h/runs", {
        input: {},
        wait: true,
      });
      pending = run.body.interrupts.find((i) => i.namespace[0] === "refund_agent")!;
    });

    it("answers every hostile request with a 4xx JSON error and changes nothing", async () => {
      const failures: string[] = [];
      for (const [name, method, path, body, headers] of cases(pending)) {
        const before = await snapshotStore(served.store);
        const response = await fetch(served.url + path, {
          method,
          headers: {
            authorization: `Bearer ${TOKENS["alice"]!.token}`,
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
            ...headers,
          },
          ...(body !== undefined
            ? { body: typeof body === "string" ? body : JSON.stringify(body) }
            : {}),
        });
        const text = await response.text();
        let json: { error?: unknown; message?: unknown; details?: unknown } = {};
        try {
          json = JSON.parse(text) as typeof json;
        } catch {
          failures.push(`${name}: not JSON: ${text.slice(0, 100)}`);
        }
        if (response.status < 400 || response.status >= 500)
          failures.push(`${name}: status ${response.status}: ${text.slice(0, 200)}`);
        else if (
          typeof json.error !== "string" ||
          typeof json.message !== "string" ||
          typeof json.details !== "object"
        )
          failures.push(`${name}: error body ${text.slice(0, 200)}`);
        if ((await snapshotStore(served.store)) !== before)
          failures.push(`${name}: the store changed`);
      }
      expect(failures).toEqual([]);
      expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
      expect(({} as Record<string, unknown>)["admin"]).toBeUndefined();
    });

    it("stores hostile strings inside values as data and returns them intact", async () => {
      const hostile = {
        nul: "a\u0000b",
        surrogate: "x\ud800y",
        proto: "__proto__",
        rtl: "\u202e",
        emoji: "😀",
      };
      const created = await alice<{ metadata: Record<string, string> }>("POST", "/threads", {
        graph: "ask",
        threadId: "t-values",
        metadata: hostile,
      });
      expect(created.status).toBe(201);
      const got = await alice<{ metadata: Record<string, string> }>("GET", "/threads/t-values");
      expect(got.body.metadata).toEqual(hostile);
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
