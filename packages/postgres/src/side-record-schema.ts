/**
 * Migration 16 of the Postgres store: the `side_records` table.
 */

const KEY = 'text COLLATE "C"';

/**
 * A feature's own records (capability `sideRecords`): keyed by tenant, kind and key, first write
 * wins, with an expiry (NULL: never) and the thread whose deletion deletes them. The tenant is ''
 * with has_tenant false for none, so the primary key needs no NULL.
 */
export const SIDE_RECORDS = (s: string): string => `
  CREATE TABLE ${s}.side_records (
    has_tenant boolean NOT NULL,
    tenant     ${KEY} NOT NULL,
    kind       ${KEY} NOT NULL,
    key        ${KEY} NOT NULL,
    value      text NOT NULL,
    expires_at timestamptz,
    thread_id  ${KEY},
    PRIMARY KEY (has_tenant, tenant, kind, key)
  );
  CREATE INDEX side_records_by_thread ON ${s}.side_records (thread_id)
    WHERE thread_id IS NOT NULL;
`;
