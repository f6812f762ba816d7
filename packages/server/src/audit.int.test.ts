/**
 * The provable audit log over real HTTP, on SQLite and on Postgres: `GET /audit/verify` finds the
 * chains of a real run intact, names the line a manual UPDATE changed and a tail a DELETE cut
 * (against the signed head of the server's key); `GET /audit/export` streams JSON Lines whose
 * hashes an auditor re-computes with the documented rule alone; both are tenant-scoped.
 */
import { createHash } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import type { AuditVerification, Checkpointer } from "@rein/core";
import { PostgresSaver } from "@rein/postgres";
import { SqliteSaver } from "@rein/sqlite";
import {
  TOKENS,
  client,
  postgresBackend,
  serveOn,
  sqliteBackend,
  type Backend,
} from "./testing/harness.ts";

type Json = Record<string, unknown>;
const AUDIT_KEY = "server-audit-key-for-tests";

/** Runs SQL on the store's own database, as someone with database access would. */
async function tamper(store: Checkpointer, sql: (audit: string) => string): Promise<void> {
  if (store instanceof SqliteSaver) store.db.exec(sql("audit"));
  else if (store instanceof PostgresSaver) await store.pool.query(sql(`"${store.schema}".audit`));
  else throw new Error("no SQL on this store");
}

/** The documented hash of a line (docs/audit.md), written out here without Rein's helper. */
function documentedHash(line: Json): string {
  const thread = String(line["threadId"]);
  const text = `rein.audit.v1\n${Buffer.byteLength(thread)}:${thread}\n${String(line["n"])}\n${(line["prevHash"] as string | null) ?? ""}\n${String(line["content"])}`;
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`the audit log over HTTP on ${backend.name}`, () => {
    const served = serveOn(backend, { auditKey: AUDIT_KEY });
    let alice: ReturnType<typeof client>;
    let reader: ReturnType<typeof client>;
    let bob: ReturnType<typeof client>;

    beforeEach(() => {
      alice = client(served.url, TOKENS["alice"]!.token);
      reader = client(served.url, TOKENS["reader"]!.token);
      bob = client(served.url, TOKENS["bob"]!.token);
    });

    /** A desk run answered twice with a steer between: three audit lines on one thread. */
    async function answeredDesk(threadId = "t-desk"): Promise<Json[]> {
      expect((await alice("POST", "/threads", { graph: "desk", threadId })).status).toBe(201);
      const run = await alice<{ interrupts: { id: string; runId: string; namespace: string[] }[] }>(
        "POST",
        `/threads/${threadId}/runs`,
        { input: {}, wait: true },
      );
      const [first, second] = run.body.interrupts;
      await alice("POST", `/threads/${threadId}/resume`, {
        target: { runId: first!.runId, namespace: first!.namespace },
        resume: { type: "accept" },
        steering: "half only",
      });
      await alice("POST", `/threads/${threadId}/resume`, {
        resumeMap: { [second!.id]: { type: "accept" } },
      });
      const audit = await alice<{ items: Json[] }>("GET", `/audit?threadId=${threadId}`);
      expect(audit.body.items.map((a) => a["action"])).toEqual(["answer", "steer", "answer"]);
      return audit.body.items;
    }

    it("an intact log verifies; after a manual UPDATE of one audit row, verify names that row", async () => {
      const lines = await answeredDesk();
      const ok = await reader<AuditVerification>("GET", "/audit/verify");
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({
        ok: true,
        checked: 3,
        chains: 1,
        legacy: 0,
        signed: { checked: 0, written: 1 },
      });
      await tamper(
        served.store,
        (audit) =>
          `UPDATE ${audit} SET record = replace(record, 'alice@acme', 'mallory@acme') WHERE n = 2`,
      );
      const broken = await reader<AuditVerification>("GET", "/audit/verify");
      expect(broken.status).toBe(200);
      expect(broken.body.ok).toBe(false);
      expect(broken.body.firstBroken).toMatchObject({
        threadId: "t-desk",
        n: 2,
        id: lines[1]?.["id"],
        reason: "hash_mismatch",
      });
      expect(broken.body.firstBroken?.message).toContain(String(lines[1]?.["id"]));
    });

    it("a deleted newest row is found against the signed head of the server's key", async () => {
      await answeredDesk();
      expect((await reader<AuditVerification>("GET", "/audit/verify")).body.ok).toBe(true);
      await tamper(served.store, (audit) => `DELETE FROM ${audit} WHERE n = 3`);
      const cut = await reader<AuditVerification>("GET", "/audit/verify?threadId=t-desk");
      expect(cut.body).toMatchObject({
        ok: false,
        checked: 2,
        firstBroken: { threadId: "t-desk", n: 3, reason: "truncated" },
      });
    });

    it("erasing an unsigned thread's chain fields after an edit is a break, never legacy", async () => {
      const lines = await answeredDesk();
      // No verify has run yet, so the thread has no signed head to fall back on.
      await tamper(
        served.store,
        (audit) =>
          `UPDATE ${audit} SET record = replace(record, 'alice@acme', 'mallory@acme') WHERE n = 1`,
      );
      await tamper(
        served.store,
        (audit) =>
          `UPDATE ${audit} SET n = NULL, prev_hash = NULL, hash = NULL WHERE thread_id = 't-desk'`,
      );
      const erased = await reader<AuditVerification>("GET", "/audit/verify?threadId=t-desk");
      expect(erased.status).toBe(200);
      expect(erased.body).toMatchObject({
        ok: false,
        legacy: 0,
        firstBroken: { threadId: "t-desk", id: lines[0]?.["id"], reason: "unchained" },
      });
    });

    it("exports JSON Lines whose hashes re-compute with the documented rule alone", async () => {
      const lines = await answeredDesk();
      await answeredDesk("t-other");
      const response = await fetch(`${served.url}/audit/export?threadId=t-desk`, {
        headers: { authorization: `Bearer ${TOKENS["reader"]!.token}` },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("application/jsonl");
      const exported = (await response.text())
        .trimEnd()
        .split("\n")
        .map((text) => JSON.parse(text) as Json);
      expect(exported.map((l) => [l["threadId"], l["n"]])).toEqual([
        ["t-desk", 1],
        ["t-desk", 2],
        ["t-desk", 3],
      ]);
      let prev: unknown = null;
      for (const line of exported) {
        expect(line["prevHash"]).toBe(prev);
        expect(line["hash"]).toBe(documentedHash(line));
        prev = line["hash"];
      }
      expect(exported.map((l) => (l["record"] as Json)["id"])).toEqual(lines.map((l) => l["id"]));
      // Without a thread: every line of the tenant, thread by thread.
      const all = await fetch(`${served.url}/audit/export`, {
        headers: { authorization: `Bearer ${TOKENS["reader"]!.token}` },
      });
      const threads = (await all.text())
        .trimEnd()
        .split("\n")
        .map((text) => (JSON.parse(text) as Json)["threadId"]);
      expect(threads).toEqual(["t-desk", "t-desk", "t-desk", "t-other", "t-other", "t-other"]);
    });

    it("documents both routes in OpenAPI, the export as JSON Lines of its line schema", async () => {
      const doc = await client(served.url, null)<{ paths: Record<string, Json> }>(
        "GET",
        "/openapi.json",
      );
      const get = (path: string) => (doc.body.paths[path] as { get: Json }).get;
      expect(get("/audit/verify")["x-rein-scope"]).toBe("read");
      const ok = (get("/audit/export")["responses"] as Record<string, Json>)["200"]!;
      const content = ok["content"] as Record<string, { schema: { required?: string[] } }>;
      expect(Object.keys(content)).toEqual(["application/jsonl"]);
      expect(content["application/jsonl"]?.schema.required).toEqual(
        expect.arrayContaining(["seq", "threadId", "n", "prevHash", "hash", "content"]),
      );
    });

    it("verify and export are tenant-scoped: another tenant sees nothing and cannot name ours", async () => {
      await answeredDesk();
      const other = await bob<AuditVerification>("GET", "/audit/verify");
      expect(other.body).toMatchObject({ ok: true, checked: 0, chains: 0 });
      const named = await bob("GET", "/audit/verify?tenant=acme");
      expect(named.status).toBe(400);
      expect(named.body["error"]).toBe("invalid_input");
      expect((await bob("GET", "/audit/verify?threadId=t-desk")).status).toBe(404);
      expect((await bob("GET", "/audit/export?threadId=t-desk")).status).toBe(404);
      const exported = await fetch(`${served.url}/audit/export`, {
        headers: { authorization: `Bearer ${TOKENS["bob"]!.token}` },
      });
      expect(await exported.text()).toBe("");
      expect((await client(served.url, null)("GET", "/audit/verify")).status).toBe(401);
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
