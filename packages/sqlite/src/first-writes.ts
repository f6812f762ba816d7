/**
 * The SQLite store's first-write records: `ctx.once` results (`once_results`) and side records
 * (capability `sideRecords`, the `side_records` table of migration 13), read and written through
 * the connection's prepared statements. First write wins for both.
 */
import type { Fence, RuntimeStore, SideRecordStore, SideRecordWrite } from "@rein/core/store";
import type { RowCodec } from "./codec.ts";
import { settle } from "./errors.ts";
import type { Statements } from "./statements.ts";

/** The primary key's first columns: a null tenant is `(0, '')`, never a tenant named `''`. */
function scopeOf(tenant: string | null): [number, string] {
  return tenant === null ? [0, ""] : [1, tenant];
}

/** The members of a store that write first-write records. */
export type FirstWrites = Pick<RuntimeStore, "getOnce" | "putOnce"> & SideRecordStore;

/**
 * The first-write members of a SQLite store on `sql`, times read from `clock`; `fenced` runs a
 * write under its fence (the store's own fencing).
 */
export function sqliteFirstWrites(
  sql: Statements,
  codec: RowCodec,
  clock: () => Date,
  fenced: (fence: Fence | undefined, body: () => unknown) => void,
): FirstWrites {
  return {
    getOnce: (threadId, taskId, key) =>
      settle(() => {
        const row = sql.getOnce.get(threadId, taskId, key);
        return row ? { value: codec.decode(row.value) } : undefined;
      }),
    putOnce: (threadId, taskId, key, value, fence) =>
      settle(() => {
        const text = codec.encode(value);
        // INSERT .. DO NOTHING then read: the row never changes once written, so the read sees
        // the winner's value even when another process won.
        fenced(fence, () => sql.insertOnce.run(threadId, taskId, key, text));
        const row = sql.getOnce.get(threadId, taskId, key);
        return { value: codec.decode(row?.value ?? text) };
      }),
    getSideRecord: (tenant, kind, key) =>
      settle(() => {
        const row = sql.getSideRecord.get(...scopeOf(tenant), kind, key, clock().getTime());
        return row ? { value: codec.decode(row.value) } : undefined;
      }),
    putSideRecord: (record: SideRecordWrite) =>
      settle(() => {
        const text = codec.encode(record.value);
        const now = clock().getTime();
        const scope = [...scopeOf(record.tenant), record.kind, record.key] as const;
        const expires = record.expiresAt === null ? null : Date.parse(record.expiresAt);
        // The insert (or the takeover of an expired row) and the read after it run on this
        // connection with nothing awaited in between, so no other write of this process lands
        // between them.
        const { changes } = sql.insertSideRecord.run(
          ...scope,
          text,
          expires,
          record.threadId ?? null,
          now,
        );
        const row = sql.getSideRecord.get(...scope, now);
        return { value: codec.decode(row?.value ?? text), created: Number(changes) > 0 };
      }),
  };
}
