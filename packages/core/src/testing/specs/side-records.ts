/** Side records: keyed by tenant, kind and key, first write wins, gone when expired or with their thread. */
import { expect } from "vitest";
import { makeThread, threadId } from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";
import type { SideRecordWrite } from "../../checkpoint/types.ts";

/** A record of kind `"test:claims"` under tenant `acme`, lasting unless `over` says otherwise. */
function record(key: string, value: unknown, over: Partial<SideRecordWrite> = {}): SideRecordWrite {
  return { tenant: "acme", kind: "test:claims", key, value, expiresAt: null, ...over };
}

/** An ISO time `ms` from now. */
function fromNow(ms: number): string {
  return new Date(Date.now() + ms).toISOString();
}

/** Specs of getSideRecord and putSideRecord. */
export const sideRecordSpecs: SpecModule = {
  concern: "side records",
  register({ spec }) {
    spec(
      "a record is stored once: the first write wins and later writes get it back",
      async (saver) => {
        expect(await saver.getSideRecord("acme", "test:claims", "k1")).toBeUndefined();
        expect(await saver.putSideRecord(record("k1", { by: "first" }))).toEqual({
          value: { by: "first" },
          created: true,
        });
        expect(await saver.putSideRecord(record("k1", { by: "second" }))).toEqual({
          value: { by: "first" },
          created: false,
        });
        expect(await saver.getSideRecord("acme", "test:claims", "k1")).toEqual({
          value: { by: "first" },
        });
      },
      ["sideRecords"],
    );

    spec(
      "tenant and kind are part of the key: other tenants and kinds never meet a record",
      async (saver) => {
        await saver.putSideRecord(record("k", "acme's"));
        expect(await saver.getSideRecord("globex", "test:claims", "k")).toBeUndefined();
        expect(await saver.getSideRecord(null, "test:claims", "k")).toBeUndefined();
        expect(await saver.getSideRecord("acme", "test:other", "k")).toBeUndefined();
        expect(await saver.putSideRecord(record("k", "globex's", { tenant: "globex" }))).toEqual({
          value: "globex's",
          created: true,
        });
        expect(await saver.putSideRecord(record("k", "no tenant's", { tenant: null }))).toEqual({
          value: "no tenant's",
          created: true,
        });
        expect(await saver.putSideRecord(record("k", "", { tenant: "" }))).toEqual({
          value: "",
          created: true,
        });
        expect(await saver.getSideRecord("acme", "test:claims", "k")).toEqual({ value: "acme's" });
        expect(await saver.getSideRecord(null, "test:claims", "k")).toEqual({
          value: "no tenant's",
        });
      },
      ["sideRecords"],
    );

    spec(
      "an expired record is missed by reads and replaced by the next write",
      async (saver) => {
        await saver.putSideRecord(
          record("old", "stale", { expiresAt: "2001-01-01T00:00:00.000Z" }),
        );
        expect(await saver.getSideRecord("acme", "test:claims", "old")).toBeUndefined();
        expect(await saver.putSideRecord(record("old", "fresh"))).toEqual({
          value: "fresh",
          created: true,
        });
        expect(await saver.getSideRecord("acme", "test:claims", "old")).toEqual({ value: "fresh" });
      },
      ["sideRecords"],
    );

    spec(
      "a record lasts until its expiry and is gone after it",
      async (saver, time) => {
        await saver.putSideRecord(record("soon", "kept", { expiresAt: fromNow(1_500) }));
        expect(await saver.putSideRecord(record("soon", "other"))).toEqual({
          value: "kept",
          created: false,
        });
        await time.advance(2_000);
        expect(await saver.getSideRecord("acme", "test:claims", "soon")).toBeUndefined();
      },
      ["sideRecords"],
    );

    spec(
      "concurrent first writes agree on one stored value, and exactly one is created",
      async (saver) => {
        const results = await Promise.all(
          ["a", "b", "c", "d"].map((v) => saver.putSideRecord(record("race", v))),
        );
        const stored = await saver.getSideRecord("acme", "test:claims", "race");
        expect(stored).toBeDefined();
        for (const result of results) expect(result.value).toEqual(stored?.value);
        expect(results.filter((r) => r.created)).toHaveLength(1);
      },
      ["sideRecords"],
    );

    spec(
      "deleting a thread deletes its records and no other",
      async (saver) => {
        await saver.putThread(makeThread("t1", { tenant: "acme" }));
        await saver.putSideRecord(record("of-t1", 1, { threadId: threadId("t1") }));
        await saver.putSideRecord(record("of-t2", 2, { threadId: threadId("t2") }));
        await saver.putSideRecord(record("of-none", 3));
        await saver.deleteThread(threadId("t1"));
        expect(await saver.getSideRecord("acme", "test:claims", "of-t1")).toBeUndefined();
        expect(await saver.getSideRecord("acme", "test:claims", "of-t2")).toEqual({ value: 2 });
        expect(await saver.getSideRecord("acme", "test:claims", "of-none")).toEqual({ value: 3 });
        expect(await saver.putSideRecord(record("of-t1", "again"))).toEqual({
          value: "again",
          created: true,
        });
      },
      ["sideRecords", "threadCatalog"],
    );
  },
};
