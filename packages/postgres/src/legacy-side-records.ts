/**
 * Migration 17 of the Postgres store: the side records an earlier server kept in `ctx.once`
 * slots, copied into `side_records`.
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

/** The copy: helper functions for this transaction only, then one statement. */
export const LEGACY_SIDE_RECORDS = (s: string): string => `
  -- The tenant a request id's tenant segment names (not '-', which names none): as it is, or
  -- decoded when escaped ('%…'); NULL when it does not decode (no request id is written so).
  CREATE FUNCTION pg_temp.rein_request_tenant(segment text) RETURNS text
  LANGUAGE plpgsql IMMUTABLE AS $fn$
  DECLARE bytes bytea := ''::bytea; rest text;
  BEGIN
    IF left(segment, 1) <> '%' THEN RETURN segment; END IF;
    rest := substr(segment, 2);
    WHILE rest <> '' LOOP
      IF left(rest, 1) = '%' THEN
        bytes := bytes || decode(substr(rest, 2, 2), 'hex');
        rest := substr(rest, 4);
      ELSE
        bytes := bytes || convert_to(left(rest, 1), 'UTF8');
        rest := substr(rest, 2);
      END IF;
    END LOOP;
    RETURN convert_from(bytes, 'UTF8');
  EXCEPTION WHEN others THEN RETURN NULL;
  END $fn$;
  -- When a spent link's record stops mattering: 30 days after it was spent (NULL: unreadable).
  CREATE FUNCTION pg_temp.rein_link_expiry(value text) RETURNS timestamptz
  LANGUAGE plpgsql IMMUTABLE AS $fn$
  BEGIN
    RETURN (value::jsonb ->> 'at')::timestamptz + interval '30 days';
  EXCEPTION WHEN others THEN RETURN NULL;
  END $fn$;
  WITH legacy AS (
    SELECT o.thread_id, o.task_id AS kind, o.key, o.value, t.tenant AS thread_tenant,
      t.thread_id IS NOT NULL AS has_thread,
      CASE WHEN o.task_id = 'http:idempotency'
        THEN substring(o.key FROM '^http:([^:]+):') END AS segment,
      length(o.thread_id) + (SELECT count(*)::int FROM regexp_split_to_table(o.thread_id, '') c
        WHERE ascii(c) > 65535) AS units
    FROM ${s}.once_results o
    LEFT JOIN ${s}.threads t ON t.thread_id = o.thread_id
    WHERE o.task_id IN ('http:idempotency', 'http:links', 'notify:slack')
  ), scoped AS (
    SELECT
      CASE kind
        WHEN 'http:idempotency' THEN segment IS NOT NULL AND segment <> '-'
        WHEN 'http:links' THEN thread_tenant IS NOT NULL
        ELSE false
      END AS has_tenant,
      CASE
        WHEN kind = 'http:idempotency' AND segment <> '-' THEN pg_temp.rein_request_tenant(segment)
        WHEN kind = 'http:links' THEN coalesce(thread_tenant, '')
        ELSE ''
      END AS tenant,
      kind, units || ':' || thread_id || ':' || key AS key, value,
      CASE WHEN kind = 'http:links' THEN pg_temp.rein_link_expiry(value) END AS expires_at,
      thread_id
    FROM legacy
    WHERE kind <> 'http:links' OR has_thread
  )
  INSERT INTO ${s}.side_records (has_tenant, tenant, kind, key, value, expires_at, thread_id)
  SELECT has_tenant, tenant, kind, key, value, expires_at, thread_id
  FROM scoped WHERE tenant IS NOT NULL
  ON CONFLICT (has_tenant, tenant, kind, key) DO UPDATE
    SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at, thread_id = EXCLUDED.thread_id
    WHERE ${s}.side_records.expires_at IS NOT NULL AND ${s}.side_records.expires_at <= now();
  DROP FUNCTION pg_temp.rein_request_tenant(text);
  DROP FUNCTION pg_temp.rein_link_expiry(text);
`;
