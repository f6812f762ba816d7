/**
 * The audit log's hash chain: one chain per thread, linked and hashed as `auditEntryHash` says,
 * verified by `verifyAudit`, with signed heads under a key. Tampering is tested per backend with
 * SQL (`audit-tamper.int.test.ts` of each store): the memory store has no rows to edit.
 */
import { expect } from "vitest";
import { auditEntryHash } from "../../checkpoint/audit-chain.ts";
import type { AuditChainEntry, AuditChainQuery, Checkpointer } from "../../checkpoint/types.ts";
import { makeAudit, makeThread, threadId } from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";

async function chain(saver: Checkpointer, query: AuditChainQuery): Promise<AuditChainEntry[]> {
  const lines: AuditChainEntry[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page += 1) {
    const result = await saver.listAuditChain({ ...query, cursor });
    if (query.limit !== undefined) expect(result.items.length).toBeLessThanOrEqual(query.limit);
    lines.push(...result.items);
    cursor = result.nextCursor;
    if (cursor === null) return lines;
  }
  throw new Error("listAuditChain did not terminate");
}

const KEY = "audit-test-key";

/** Specs of the audit hash chain. */
export const auditChainSpecs: SpecModule = {
  concern: "audit-chain",
  register({ spec }) {
    spec(
      "each line links to its thread's previous line, hashed over its stored content",
      async (saver) => {
        const records = [makeAudit("t1", "a1"), makeAudit("t2", "a2"), makeAudit("t1", "a3")];
        for (const record of records) await saver.appendAudit(record);
        const lines = await chain(saver, {});
        expect(lines.map((l) => [l.threadId, l.n])).toEqual([
          ["t1", 1],
          ["t1", 2],
          ["t2", 1],
        ]);
        const [first, second, other] = lines;
        expect(first?.prevHash).toBeNull();
        expect(other?.prevHash).toBeNull();
        expect(second?.prevHash).toBe(first?.hash);
        for (const line of lines) {
          const prev = line.prevHash ?? "";
          expect(line.hash).toBe(auditEntryHash(line.threadId, line.n ?? 0, prev, line.content));
          expect(line.hash).toMatch(/^[0-9a-f]{64}$/);
        }
        // The content is the record as stored: it decodes to what was appended.
        expect(lines.map((l) => saver.serializer.deserialize(l.content))).toEqual([
          records[0],
          records[2],
          records[1],
        ]);
        expect(first?.seq).toBeLessThan(second?.seq ?? 0);
      },
      ["auditChain"],
    );

    spec(
      "listAuditChain pages by thread, then append order, without gaps",
      async (saver) => {
        for (let i = 0; i < 9; i += 1) await saver.appendAudit(makeAudit(`t${i % 3}`, `a${i}`));
        const all = await chain(saver, {});
        expect(all).toHaveLength(9);
        for (const limit of [1, 2, 4, 9, 50]) expect(await chain(saver, { limit })).toEqual(all);
        const t1 = await chain(saver, { threadId: threadId("t1"), limit: 2 });
        expect(t1.map((l) => l.n)).toEqual([1, 2, 3]);
      },
      ["auditChain"],
    );

    spec(
      "verifyAudit re-computes every chain in scope and finds them intact",
      async (saver) => {
        await saver.putThread(makeThread("ta", { tenant: "acme" }));
        await saver.putThread(makeThread("tb", { tenant: "beta" }));
        for (const [thread, id] of [
          ["ta", "a1"],
          ["tb", "a2"],
          ["ta", "a3"],
          ["tn", "a4"],
        ]) {
          await saver.appendAudit(makeAudit(thread ?? "", id ?? ""));
        }
        const all = await saver.verifyAudit({});
        expect(all).toEqual({ ok: true, checked: 4, chains: 3, legacy: 0, signed: null });
        expect(await saver.verifyAudit({ tenant: "acme" })).toMatchObject({
          checked: 2,
          chains: 1,
        });
        expect(await saver.verifyAudit({ tenant: null })).toMatchObject({ checked: 1, chains: 1 });
        expect(await saver.verifyAudit({ threadId: threadId("tb") })).toMatchObject({
          ok: true,
          checked: 1,
        });
        expect(await saver.verifyAudit({ threadId: threadId("none") })).toMatchObject({
          ok: true,
          checked: 0,
          chains: 0,
        });
      },
      ["auditChain", "threadCatalog"],
    );

    spec(
      "concurrent appends to one thread take one position each",
      async (saver) => {
        await Promise.all(
          Array.from({ length: 12 }, (_, i) => saver.appendAudit(makeAudit("t1", `a${i}`))),
        );
        const lines = await chain(saver, { threadId: threadId("t1") });
        expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
        expect(await saver.verifyAudit({})).toMatchObject({ ok: true, checked: 12 });
      },
      ["auditChain"],
    );

    spec(
      "with a key, verify seals each chain's head and checks it the next time",
      async (saver) => {
        await saver.appendAudit(makeAudit("t1", "a1"));
        await saver.appendAudit(makeAudit("t2", "a2"));
        expect((await saver.verifyAudit({ key: KEY })).signed).toEqual({ checked: 0, written: 2 });
        expect(await saver.verifyAudit({ key: KEY })).toMatchObject({
          ok: true,
          signed: { checked: 2, written: 0 },
        });
        await saver.appendAudit(makeAudit("t1", "a3"));
        expect((await saver.verifyAudit({ key: KEY })).signed).toEqual({ checked: 2, written: 1 });
        // Without the key nothing is checked against the heads; with another key they are forged.
        expect(await saver.verifyAudit({})).toMatchObject({ ok: true, signed: null });
        const other = await saver.verifyAudit({ key: "another key" });
        expect(other).toMatchObject({ ok: false, firstBroken: { reason: "bad_signature" } });
        expect(other.firstBroken?.threadId).toBe("t1");
      },
      ["auditChain"],
    );

    spec(
      "deleting a thread removes its chain and signed head; the id starts anew",
      async (saver) => {
        await saver.appendAudit(makeAudit("t1", "a1"));
        await saver.appendAudit(makeAudit("t1", "a2"));
        await saver.appendAudit(makeAudit("t2", "a3"));
        await saver.verifyAudit({ key: KEY });
        await saver.deleteThread(threadId("t1"));
        expect(await saver.verifyAudit({ key: KEY })).toMatchObject({ ok: true, checked: 1 });
        await saver.appendAudit(makeAudit("t1", "a4"));
        const lines = await chain(saver, { threadId: threadId("t1") });
        expect(lines.map((l) => [l.n, l.prevHash])).toEqual([[1, null]]);
        expect(await saver.verifyAudit({ key: KEY })).toMatchObject({ ok: true, checked: 2 });
      },
      ["auditChain", "threadCatalog"],
    );
  },
};
