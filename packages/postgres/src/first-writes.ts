/**
 * The Postgres store's first-write records: `ctx.once` results (`once_results`) and side records
 * (capability `sideRecords`, the `side_records` table of migration 16), one statement per call
 * on the store's pool. First write wins for both.
 */
import type pg from "pg";
import {
  checkFence,
  type RuntimeStore,
  type SideRecordStore,
  type SideRecordWrite,
} from "@rein/core/store";
import type { RowCodec } from "./codec.ts";
import { checked, guarded } from "./connection.ts";
import type { Named, Statements } from "./statements.ts";

/** The members of a store that write first-write records. */
export type FirstWrites = Pick<RuntimeStore, "getOnce" | "putOnce"> & SideRecordStore;

/** The first-write members of a Postgres store on `pool` with `sql`. */
export function postgresFirstWrites(pool: pg.Pool, sql: Statements, codec: RowCodec): FirstWrites {
  const rows = <Row extends pg.QueryResultRow>(statement: Named, values: unknown[]) =>
    guarded(async () => (await pool.query<Row>(checked(statement, values))).rows);
  // The primary key's first columns: a null tenant is (false, ''), never a tenant named ''.
  const scopeOf = (record: Pick<SideRecordWrite, "tenant" | "kind" | "key">) => [
    record.tenant !== null,
    record.tenant ?? "",
    record.kind,
    record.key,
  ];
  return {
    async getOnce(threadId, taskId, key) {
      const [row] = await rows<{ value: string }>(sql.getOnce, [threadId, taskId, key]);
      return row ? { value: codec.decode(row.value) } : undefined;
    },
    async putOnce(threadId, taskId, key, value, fence) {
      const text = codec.encode(value);
      // The fencing token goes last; the lease check is in the same statement.
      const [row] = await rows<{ current_token: string | null; value: string | null }>(
        sql.putOnce,
        [threadId, taskId, key, text, fence?.token ?? null],
      );
      if (fence) checkFence(fence, row?.current_token == null ? null : Number(row.current_token));
      // A concurrent writer committed after this statement's snapshot: read its value afresh.
      const stored =
        row?.value ??
        (await rows<{ value: string }>(sql.getOnce, [threadId, taskId, key]))[0]?.value;
      return { value: codec.decode(stored ?? text) };
    },
    async getSideRecord(tenant, kind, key) {
      const [row] = await rows<{ value: string }>(
        sql.getSideRecord,
        scopeOf({ tenant, kind, key }),
      );
      return row ? { value: codec.decode(row.value) } : undefined;
    },
    async putSideRecord(record) {
      const text = codec.encode(record.value);
      const scope = scopeOf(record);
      const [row] = await rows<{ inserted: string | null; value: string | null }>(
        sql.putSideRecord,
        [...scope, text, record.expiresAt, record.threadId ?? null],
      );
      if (row?.inserted != null) return { value: codec.decode(row.inserted), created: true };
      // A concurrent writer committed after this statement's snapshot: read its value afresh.
      const stored =
        row?.value ?? (await rows<{ value: string }>(sql.getSideRecord, scope))[0]?.value;
      return { value: codec.decode(stored ?? text), created: false };
    },
  };
}
