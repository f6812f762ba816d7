#!/usr/bin/env bash
# Vacuums the system catalogs of the test database (REIN_TEST_POSTGRES_URL, else
# postgres://postgres@127.0.0.1:5432/test). Every Postgres suite creates and drops its own schemas:
# thousands of tables per run, each leaving dead rows in pg_attribute, pg_class, pg_depend... A
# server with autovacuum off (as CI's is) keeps every one of them, and each later CREATE and
# migration walks them: after a day of runs the Postgres suites took 1.5-1.9x as long. Only the
# catalogs are vacuumed (one relation at a time, so a schema dropped meanwhile cannot fail it);
# a server that does not answer is left alone, since the suites then say why they skip.
set -uo pipefail
url=${REIN_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
command -v psql >/dev/null || exit 0
psql "$url" -qAtc "SELECT 1" >/dev/null 2>&1 || exit 0
started=$SECONDS
psql "$url" -qAtc "SELECT format('VACUUM pg_catalog.%I;', relname) FROM pg_class
  WHERE relnamespace = 'pg_catalog'::regnamespace AND relkind = 'r'" |
  psql "$url" -q >/dev/null
echo "vacuumed the test database's catalogs in $((SECONDS - started))s"
