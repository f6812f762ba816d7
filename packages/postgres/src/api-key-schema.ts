/**
 * Migration 14 of the Postgres store: the `api_keys` table, its secret's SHA-256 digest unique
 * and indexed, so a request's key is one indexed read on any process.
 */

const KEY = 'text COLLATE "C"';

/** The `api_keys` table of schema `s` (quoted). */
export const API_KEYS_SCHEMA = (s: string): string => `
  CREATE TABLE ${s}.api_keys (
    id           ${KEY} PRIMARY KEY,
    name         text NOT NULL,
    tenant       ${KEY} NOT NULL,
    scopes       text NOT NULL,
    hash         ${KEY} NOT NULL UNIQUE,
    created_at   ${KEY} NOT NULL,
    created_by   text NOT NULL,
    expires_at   ${KEY},
    revoked_at   ${KEY},
    last_used_at ${KEY}
  );
  CREATE INDEX api_keys_by_tenant ON ${s}.api_keys (tenant, created_at, id);
`;
