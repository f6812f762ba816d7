/**
 * Migration 15 of the SQLite store: the side records an earlier server kept in `ctx.once` slots,
 * copied into `side_records`.
 *
 * Before the `sideRecords` capability, the server kept its idempotency claims and outcomes, spent
 * decision links and posted Slack messages in once slots of the thread under made-up task ids
 * (the record's kind: `http:idempotency`, `http:links`, `notify:slack`) with the feature's key.
 * Each becomes the side record the server reads now: same kind and value (the value is the
 * store's serializer text either way), keyed `<thread length>:<thread>:<key>` (the length in
 * UTF-16 code units, as JavaScript counts it), kept with its thread. Its tenant:
 *
 * - a request's claim (`http:<tenant>:<thread>:<key>`) and its outcome (the same, `#outcome`
 *   appended): the request id's tenant segment (`-` for none, `%…` percent-encoded);
 * - a thread id's claim (`thread:create…`) and Slack's records: none;
 * - a spent link: its thread's (a link's tenant is its question's, which is its thread's).
 *
 * A spent link's record expires 30 days after it was spent (no link lives longer, and a link
 * whose time is up is refused before its record is read); the others last as long as their
 * thread. First write wins: a slot that already has a live side record keeps it (the server
 * read that one first). The once rows stay (a thread's deletion deletes them).
 */

/** The copy, in one statement. */
export const LEGACY_SIDE_RECORDS = `
  WITH RECURSIVE
  legacy (thread_id, kind, key, value, segment) AS (
    SELECT thread_id, task_id, key, value,
      CASE WHEN task_id = 'http:idempotency' AND substr(key, 1, 5) = 'http:'
        AND instr(substr(key, 6), ':') > 1
        THEN substr(key, 6, instr(substr(key, 6), ':') - 1) END
    FROM once_results
    WHERE task_id IN ('http:idempotency', 'http:links', 'notify:slack')
  ),
  -- A percent-encoded tenant segment, decoded one character at a time into UTF-8 hex.
  decoding (thread_id, kind, key, rest, hex) AS (
    SELECT thread_id, kind, key, substr(segment, 2), '' FROM legacy
    WHERE substr(segment, 1, 1) = '%'
    UNION ALL
    SELECT thread_id, kind, key,
      substr(rest, CASE WHEN substr(rest, 1, 1) = '%' THEN 4 ELSE 2 END),
      hex || CASE WHEN substr(rest, 1, 1) = '%' THEN substr(rest, 2, 2)
                  ELSE hex(substr(rest, 1, 1)) END
    FROM decoding WHERE rest <> ''
  ),
  decoded (thread_id, kind, key, tenant) AS (
    SELECT thread_id, kind, key, CAST(unhex(hex) AS TEXT) FROM decoding WHERE rest = ''
  ),
  -- Each thread id's length in UTF-16 code units: characters past U+FFFF count twice.
  counting (thread_id, rest, units) AS (
    SELECT DISTINCT thread_id, thread_id, 0 FROM legacy
    UNION ALL
    SELECT thread_id, substr(rest, 2), units + CASE WHEN unicode(rest) > 65535 THEN 2 ELSE 1 END
    FROM counting WHERE rest <> ''
  ),
  scoped (has_tenant, tenant, kind, key, value, expires_at, thread_id) AS (
    SELECT
      CASE
        WHEN l.kind = 'http:idempotency' THEN l.segment IS NOT NULL AND l.segment <> '-'
        WHEN l.kind = 'http:links' THEN t.tenant IS NOT NULL
        ELSE 0 END,
      CASE
        WHEN l.kind = 'http:idempotency' AND l.segment IS NOT NULL AND l.segment <> '-'
          THEN CASE WHEN substr(l.segment, 1, 1) = '%' THEN d.tenant ELSE l.segment END
        WHEN l.kind = 'http:links' THEN coalesce(t.tenant, '')
        ELSE '' END,
      l.kind,
      c.units || ':' || l.thread_id || ':' || l.key,
      l.value,
      CASE WHEN l.kind = 'http:links' AND json_valid(l.value)
        THEN CAST(unixepoch(json_extract(l.value, '$.at'), 'subsec') * 1000 AS INTEGER)
          + 30 * 86400000 END,
      l.thread_id
    FROM legacy l
    JOIN counting c ON c.thread_id = l.thread_id AND c.rest = ''
    LEFT JOIN decoded d ON d.thread_id = l.thread_id AND d.kind = l.kind AND d.key = l.key
    LEFT JOIN threads t ON t.thread_id = l.thread_id
    WHERE l.kind <> 'http:links' OR t.thread_id IS NOT NULL
  )
  INSERT INTO side_records (has_tenant, tenant, kind, key, value, expires_at, thread_id)
  SELECT * FROM scoped WHERE tenant IS NOT NULL
  ON CONFLICT (has_tenant, tenant, kind, key) DO UPDATE
    SET value = excluded.value, expires_at = excluded.expires_at, thread_id = excluded.thread_id
    WHERE side_records.expires_at IS NOT NULL
      AND side_records.expires_at <= CAST(unixepoch('subsec') * 1000 AS INTEGER);
`;
