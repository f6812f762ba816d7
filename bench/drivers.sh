#!/usr/bin/env bash
# Rein's SQLite store on node:sqlite (this tree) and on better-sqlite3 (the store at the last
# commit before the move), side by side in one run (src/drivers.ts):
#
#   bash bench/drivers.sh [--threads N] [--rounds N] [--pages N] [--queue N]
#
# The better-sqlite3 store is packages/sqlite/src at $REIN_LEGACY_SQLITE_REV (2ce84a4 unless set),
# extracted under bench/node_modules/.cache so that it resolves better-sqlite3 (LangGraph.js's
# SQLite saver depends on it, so the bench install has it) and @rein/core (this tree's) from the
# bench's node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
node scripts/ensure-bench.mjs
rev=${REIN_LEGACY_SQLITE_REV:-2ce84a4}
out=bench/node_modules/.cache/rein-legacy-sqlite/$rev
rm -rf "$out" && mkdir -p "$out"
git archive "$rev" packages/sqlite/src | tar -x -C "$out" --strip-components=2
cd bench
exec ../node_modules/.bin/tsx --conditions=@rein/source src/drivers.ts "$PWD/../$out/src/index.ts" "$@"
