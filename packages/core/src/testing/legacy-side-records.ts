/**
 * What a Rein server before side records kept in `ctx.once` slots, and the side records a store's
 * upgrade must make of it (SQLite migration 15, Postgres 17): the rows a migration test writes at
 * the schema version before, and what `getSideRecord` must answer after.
 */
import { jsonSerializer } from "../serde.ts";

/** A thread row the legacy slots belong to. */
export interface LegacyThread {
  threadId: string;
  tenant: string | null;
}

/** A once slot as the earlier server wrote it: task id = the record's kind. */
export interface LegacySlot {
  threadId: string;
  taskId: string;
  key: string;
  /** The value as stored (the store's serializer text). */
  text: string;
}

/** A side record already stored before the upgrade (written by a server that had them). */
export interface EarlierSideRecord {
  tenant: string | null;
  kind: string;
  key: string;
  text: string;
  threadId: string;
}

/** A read after the upgrade and what it must return (`undefined`: no record). */
export interface ExpectedSideRecord {
  why: string;
  tenant: string | null;
  kind: string;
  key: string;
  value: unknown;
}

/** The rows before the upgrade and the reads after it. */
export interface LegacySideRecordCase {
  threads: LegacyThread[];
  slots: LegacySlot[];
  earlier: EarlierSideRecord[];
  expected: ExpectedSideRecord[];
}

/** The side-record key of the server's slot: its thread, length-prefixed (UTF-16 units). */
const sideKey = (threadId: string, key: string): string => `${threadId.length}:${threadId}:${key}`;

/** The case, with link spends dated from `now`. */
export function legacySideRecordCase(now: Date = new Date()): LegacySideRecordCase {
  const text = (value: unknown): string => jsonSerializer.serialize(value);
  const day = 86_400_000;
  const recent = { by: "spender-1", at: new Date(now.getTime() - day).toISOString() };
  const old = { by: "spender-2", at: new Date(now.getTime() - 40 * day).toISOString() };
  const astral = "t-\u{1F600}";
  const slot = (threadId: string, taskId: string, key: string, value: unknown): LegacySlot => ({
    threadId,
    taskId,
    key,
    text: text(value),
  });
  const claim = "digest-1:8f3c";
  const outcome = { status: "answered", id: "q-1" };
  return {
    threads: [
      { threadId: "t-1", tenant: "acme" },
      { threadId: "t-2", tenant: null },
      { threadId: astral, tenant: "acme" },
    ],
    slots: [
      slot("t-1", "http:idempotency", "http:acme:t-1:k1", claim),
      slot("t-1", "http:idempotency", "http:acme:t-1:k1#outcome", outcome),
      slot("t-1", "http:idempotency", "http:-:t-1:k2", "digest-2:0a1b"),
      slot("t-1", "http:idempotency", "http:%z%C3%BC%3A1:t-1:k3", "digest-3:77"),
      slot("t-new", "http:idempotency", "thread:create", { by: "request-1", at: 5 }),
      slot("t-1", "http:links", "nonce-recent", recent),
      slot("t-1", "http:links", "nonce-old", old),
      slot("t-2", "http:links", "nonce-untenanted", recent),
      slot("t-1", "notify:slack", "event:e1", { channel: "C1", ts: "1.2" }),
      slot(astral, "notify:slack", "event:e2", { channel: "C2", ts: "3.4" }),
      slot("t-1", "http:idempotency", "http:acme:t-1:k4", "digest-4:legacy"),
      slot("t-1", "t_0123", "charge", true),
    ],
    earlier: [
      {
        tenant: "acme",
        kind: "http:idempotency",
        key: sideKey("t-1", "http:acme:t-1:k4"),
        text: text("digest-4:newer"),
        threadId: "t-1",
      },
    ],
    expected: [
      {
        why: "a request's claim, under the request id's tenant",
        tenant: "acme",
        kind: "http:idempotency",
        key: sideKey("t-1", "http:acme:t-1:k1"),
        value: claim,
      },
      {
        why: "a request's claim is not another tenant's",
        tenant: "globex",
        kind: "http:idempotency",
        key: sideKey("t-1", "http:acme:t-1:k1"),
        value: undefined,
      },
      {
        why: "a request's outcome, under its tenant",
        tenant: "acme",
        kind: "http:idempotency",
        key: sideKey("t-1", "http:acme:t-1:k1#outcome"),
        value: outcome,
      },
      {
        why: "a tenant-less request's claim ('-'), under no tenant",
        tenant: null,
        kind: "http:idempotency",
        key: sideKey("t-1", "http:-:t-1:k2"),
        value: "digest-2:0a1b",
      },
      {
        why: "a request of an escaped tenant, under the decoded tenant",
        tenant: "zü:1",
        kind: "http:idempotency",
        key: sideKey("t-1", "http:%z%C3%BC%3A1:t-1:k3"),
        value: "digest-3:77",
      },
      {
        why: "a thread id's claim (no thread row yet), under no tenant",
        tenant: null,
        kind: "http:idempotency",
        key: sideKey("t-new", "thread:create"),
        value: { by: "request-1", at: 5 },
      },
      {
        why: "a link spent a day ago, under its thread's tenant",
        tenant: "acme",
        kind: "http:links",
        key: sideKey("t-1", "nonce-recent"),
        value: recent,
      },
      {
        why: "a link spent 40 days ago has expired (no link lives 30)",
        tenant: "acme",
        kind: "http:links",
        key: sideKey("t-1", "nonce-old"),
        value: undefined,
      },
      {
        why: "a link of a tenant-less thread, under no tenant",
        tenant: null,
        kind: "http:links",
        key: sideKey("t-2", "nonce-untenanted"),
        value: recent,
      },
      {
        why: "a Slack record, under no tenant",
        tenant: null,
        kind: "notify:slack",
        key: sideKey("t-1", "event:e1"),
        value: { channel: "C1", ts: "1.2" },
      },
      {
        why: "a thread id past U+FFFF, its length counted in UTF-16 units",
        tenant: null,
        kind: "notify:slack",
        key: sideKey(astral, "event:e2"),
        value: { channel: "C2", ts: "3.4" },
      },
      {
        why: "a slot that already had a side record keeps it (first write wins)",
        tenant: "acme",
        kind: "http:idempotency",
        key: sideKey("t-1", "http:acme:t-1:k4"),
        value: "digest-4:newer",
      },
      {
        why: "a node's own once result stays a once result",
        tenant: null,
        kind: "t_0123",
        key: sideKey("t-1", "charge"),
        value: undefined,
      },
    ],
  };
}
