/**
 * What the edge refuses because it cannot honour it, over real HTTP on SQLite and Postgres alike:
 * NUL in text inputs, steering nobody will read, selectors that name no node, history cursors
 * that are no checkpoint of the thread, and errors raised before a route runs. Each refusal is a
 * 4xx JSON error with a stable code, and the store is unchanged afterwards.
 */
import { connect } from "node:net";
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
  type Reply,
  type TestServer,
} from "./testing/harness.ts";
import { graphs, pair } from "./testing/graphs.ts";

type Call = ReturnType<typeof client>;
type ErrorReply = Reply<{ error: string; message: string; details: Record<string, unknown> }>;

/** Sends a request that must be refused; returns the reply after checking the store is unchanged. */
async function refused(
  server: Pick<TestServer, "store">,
  send: () => Promise<ErrorReply>,
  status: number,
  code: string,
): Promise<ErrorReply> {
  const before = await snapshotStore(server.store);
  const reply = await send();
  expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  expect(reply.body).toMatchObject({ error: code, message: expect.any(String) as string });
  expect(typeof reply.body.details).toBe("object");
  expect(await snapshotStore(server.store)).toBe(before);
  return reply;
}

/** A page of keyset cursors whose key holds a NUL: a cursor no store makes. */
const FORGED_CURSOR = Buffer.from(JSON.stringify(["2026-01-01T00:00:00.000Z", "i\u0000"])).toString(
  "base64url",
);

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`refusals at the edge on ${backend.name}`, () => {
    const served = serveOn(backend, { graphs: { ...graphs, pair } }, "all");
    let alice: Call;
    let desk: { runId: string; interrupts: Interrupt[] };

    beforeAll(async () => {
      alice = client(served.url, TOKENS["alice"]!.token);
      await alice("POST", "/threads", { graph: "desk", threadId: "t-desk" });
      desk = (await alice<typeof desk>("POST", "/threads/t-desk/runs", { input: {}, wait: true }))
        .body;
    });

    it("refuses a NUL in any text input with 400 invalid_input naming the field, before any store", async () => {
      const i = desk.interrupts[0]!;
      const target = { runId: i.runId, namespace: i.namespace };
      const cases: [string, string, unknown, string][] = [
        ["GET", "/interrupts?graph=%00", undefined, "graph"],
        ["GET", "/interrupts?graph=desk%00&threadId=t-desk", undefined, "graph"],
        ["GET", "/interrupts/stream?graph=a%00", undefined, "graph"],
        ["GET", "/interrupts?cursor=a%00b", undefined, "cursor"],
        ["GET", "/threads?cursor=%00", undefined, "cursor"],
        ["GET", "/audit?cursor=1%00", undefined, "cursor"],
        ["GET", "/threads/t-desk/history?before=a%00", undefined, "before"],
        ["GET", "/threads/t-desk/state?checkpointId=a%00", undefined, "checkpointId"],
        ["GET", "/threads/t-desk/runs/r%00", undefined, "runId"],
        ["POST", "/threads", { graph: "desk\u0000" }, "graph"],
        ["POST", "/threads", { graph: "desk", threadId: "t\u0000" }, "threadId"],
        ["POST", "/threads/t-desk/steer", { text: "be\u0000brief" }, "text"],
        [
          "POST",
          "/threads/t-desk/steer",
          { target: { ...target, namespace: ["a\u0000"] }, text: "x" },
          "target.namespace.0",
        ],
        [
          "POST",
          "/threads/t-desk/steer",
          { target: { ...target, interruptId: "i\u0000" }, text: "x" },
          "target.interruptId",
        ],
        [
          "POST",
          "/threads/t-desk/resume",
          { target, resume: { type: "accept" }, steering: "x\u0000" },
          "steering",
        ],
        ["POST", "/threads/t-desk/resume", { resumeMap: { "i\u0000": 1 } }, "resumeMap"],
        [
          "POST",
          "/threads/t-desk/resume",
          { target, resume: { type: "accept" }, expectedCheckpointId: "c\u0000" },
          "expectedCheckpointId",
        ],
        [
          "POST",
          "/threads/t-desk/runs",
          { input: {}, interruptBefore: ["plan\u0000"] },
          "interruptBefore.0",
        ],
        [
          "POST",
          "/threads/t-desk/runs",
          { command: { target, resume: { type: "accept" }, steering: "\u0000" } },
          "command.steering",
        ],
      ];
      for (const [method, path, body, field] of cases) {
        const reply = await refused(served, () => alice(method, path, body), 400, "invalid_input");
        const issues = reply.body.details["issues"] as { path: string; message: string }[];
        expect(
          issues.some((x) => x.path.startsWith(field)),
          `${method} ${path}: ${JSON.stringify(issues)}`,
        ).toBe(true);
      }
      // A cursor whose key holds a NUL passes the edge as base64 and is refused by the store's
      // decoder, the same on every store.
      for (const path of [
        `/interrupts?cursor=${FORGED_CURSOR}`,
        `/threads?cursor=${FORGED_CURSOR}`,
      ])
        await refused(served, () => alice("GET", path), 400, "invalid_input");
      // NUL inside JSON values is data, stored and returned intact (see hostile.int.test.ts).
    });

    it("refuses steering aimed at an answered interrupt, a finished task or a finished run with 409, storing nothing", async () => {
      await alice("POST", "/threads", { graph: "pair", threadId: "t-pair" });
      const run = await alice<{ runId: string; interrupts: Interrupt[] }>(
        "POST",
        "/threads/t-pair/runs",
        { input: {}, wait: true },
      );
      const [a, b] = run.body.interrupts as [Interrupt, Interrupt];
      const answered = await alice<{ status: string }>("POST", "/threads/t-pair/resume", {
        target: { runId: a.runId, namespace: [], interruptId: a.id },
        resume: "yes",
      });
      expect(answered.body.status).toBe("interrupted");
      for (const target of [
        { runId: a.runId, namespace: [], interruptId: a.id },
        { runId: a.runId, namespace: [], taskId: a.taskId },
      ]) {
        const reply = await refused(
          served,
          () => alice("POST", "/threads/t-pair/steer", { target, text: "too late" }),
          409,
          "stale_target",
        );
        expect(reply.body.details).toMatchObject({
          runId: run.body.runId,
          runStatus: "interrupted",
        });
        expect((reply.body.details["pendingInterrupts"] as Interrupt[]).map((x) => x.id)).toEqual([
          b.id,
        ]);
      }
      await refused(
        served,
        () =>
          alice("POST", "/threads/t-pair/steer", {
            target: { runId: a.runId, namespace: [], interruptId: "i_never" },
            text: "x",
          }),
        409,
        "no_matching_target",
      );
      const steered = await alice("POST", "/threads/t-pair/steer", {
        target: { runId: b.runId, namespace: [], interruptId: b.id },
        text: "be brief",
      });
      expect(steered.status).toBe(201);
      await alice("POST", "/threads/t-pair/resume", { resume: "ok" });
      // The run is done: steering it (by default, the head run) has no next execution.
      const late = await refused(
        served,
        () => alice("POST", "/threads/t-pair/steer", { text: "late" }),
        409,
        "stale_target",
      );
      expect(late.body.details).toMatchObject({ runStatus: "done" });
      const steering = await served.store.listSteering("t-pair" as never);
      expect(steering.map((s) => s.text)).toEqual(["be brief"]);
    });

    it("refuses interruptBefore/After selectors that name no node with 400 listing the nodes, on every start path", async () => {
      await alice("POST", "/threads", { graph: "ask", threadId: "t-sel" });
      const starts: [string, Record<string, unknown>][] = [
        ["/threads/t-sel/runs", { input: {}, wait: true, interruptBefore: ["wiat"] }],
        ["/threads/t-sel/runs", { input: {}, interruptAfter: ["wiat"] }],
        ["/threads/t-sel/runs/stream", { input: {}, interruptBefore: ["wiat"] }],
      ];
      for (const [path, body] of starts) {
        const reply = await refused(served, () => alice("POST", path, body), 400, "invalid_input");
        expect(reply.body.details).toMatchObject({
          selector: "wiat",
          graph: "ask",
          nodes: ["ask"],
        });
        expect(reply.body.message).toContain("its nodes are: ask");
      }
      // A path into a sub-agent is checked against the sub-agent's nodes.
      await alice("POST", "/threads", { graph: "desk", threadId: "t-sel-desk" });
      const inner = await refused(
        served,
        () =>
          alice("POST", "/threads/t-sel-desk/runs", {
            input: {},
            wait: true,
            interruptBefore: ["refund_agent/aprove"],
          }),
        400,
        "invalid_input",
      );
      expect(inner.body.details).toMatchObject({ graph: "refund_agent", nodes: ["approve"] });
      // Valid paths and wildcards are accepted and stop where they say.
      const ok = await alice<{ interrupts: Interrupt[] }>("POST", "/threads/t-sel-desk/runs", {
        input: {},
        wait: true,
        interruptBefore: ["refund_agent/approve", "*/nothing-below-a-function-node-is-known"],
      });
      expect(ok.status).toBe(200);
      expect(ok.body.interrupts.map((i) => [i.kind, i.namespace.join("/")]).sort()).toEqual([
        ["before", "refund_agent"],
        ["dynamic", "email_agent"],
      ]);
    });

    it("refuses a history cursor that is no checkpoint of the thread with 400, and pages with a real one", async () => {
      const first = await alice<{ items: { checkpointId: string }[] }>(
        "GET",
        "/threads/t-desk/history?limit=1",
      );
      const second = await alice<{ items: { checkpointId: string }[] }>(
        "GET",
        `/threads/t-desk/history?limit=1&before=${first.body.items[0]!.checkpointId}`,
      );
      expect(second.status).toBe(200);
      expect(second.body.items[0]!.checkpointId).not.toBe(first.body.items[0]!.checkpointId);
      const other = await alice<{ headCheckpointId: string }>("GET", "/threads/t-sel-desk");
      for (const before of ["bogus", other.body.headCheckpointId]) {
        const reply = await refused(
          served,
          () => alice("GET", `/threads/t-desk/history?before=${before}`),
          400,
          "invalid_input",
        );
        expect(reply.body.details).toEqual({ before, threadId: "t-desk" });
      }
      for (const path of [
        "/interrupts?cursor=bogus",
        "/threads?cursor=bogus",
        "/audit?cursor=bogus",
        "/audit?cursor=-1",
      ])
        await refused(served, () => alice("GET", path), 400, "invalid_input");
    });

    it("answers errors raised before a route runs in the API's error shape", async () => {
      const shaped = async (response: Response, status: number, code: string): Promise<void> => {
        expect(response.status).toBe(status);
        expect(response.headers.get("content-type")).toMatch(/^application\/json/);
        const body = (await response.json()) as Record<string, unknown>;
        expect(body).toMatchObject({ error: code, message: expect.any(String) as string });
        expect(typeof body["details"]).toBe("object");
      };
      const before = await snapshotStore(served.store);
      const auth = { authorization: `Bearer ${TOKENS["alice"]!.token}` };
      const big = await fetch(`${served.url}/threads`, {
        headers: { ...auth, "x-big": "x".repeat(20_000) },
      });
      await shaped(big, 431, "headers_too_large");
      const post = (body: string, type = "application/json") =>
        fetch(`${served.url}/threads`, {
          method: "POST",
          headers: { ...auth, "content-type": type },
          body,
        });
      await shaped(
        await post(JSON.stringify({ graph: "x".repeat(2 * 1024 * 1024) })),
        413,
        "payload_too_large",
      );
      await shaped(await post('{"graph":'), 400, "invalid_input");
      await shaped(await post("graph=desk", "application/xml"), 400, "invalid_input");
      await shaped(await fetch(`${served.url}/nope`, { headers: auth }), 404, "not_found");
      await shaped(
        await fetch(`${served.url}/threads/t-desk`, { method: "PUT", headers: auth }),
        404,
        "not_found",
      );
      // Malformed HTTP, refused by Node's parser before Fastify sees a request.
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(served.url).port), "127.0.0.1");
        let text = "";
        socket.on("data", (chunk) => (text += chunk.toString()));
        socket.on("close", () => resolve(text));
        socket.on("error", reject);
        socket.write("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n");
      });
      expect(raw).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4))).toMatchObject({
        error: "invalid_input",
        details: { reason: expect.any(String) as string },
      });
      expect(await snapshotStore(served.store)).toBe(before);
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
