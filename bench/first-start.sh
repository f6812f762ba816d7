#!/usr/bin/env bash
# What a newcomer waits for, measured from clean clones: a fresh `npm ci`, and a first `npm start`
# (install, console build, server start) until the console answers `GET /` with 200.
#
#   bash bench/first-start.sh <git-rev> [runs]      # runs: 2 unless given
#
# Each run clones the repository at <git-rev> twice into a scratch folder outside it (one clone
# per measurement, so neither finds the other's node_modules). The Node.js first on PATH is used
# (printed). The npm cache is warmed first with an unmeasured `npm ci --ignore-scripts` of the
# same lockfile, so every measured install reads packages from the cache, never the network. The
# server listens on $PORT (18080 unless set) so it does not collide with another one on 8080.
set -euo pipefail
rev=${1:?usage: first-start.sh <git-rev> [runs]}
runs=${2:-2}
repo=$(cd "$(dirname "$0")/.." && pwd)
port=${PORT:-18080}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/rein-first-start-XXXXXX")
trap 'rm -rf "$scratch"' EXIT

clone() {
  git clone -q "$repo" "$1"
  git -C "$1" checkout -q "$rev"
}

# A native addon (better-sqlite3, before node:sqlite) must compile against the headers of the
# Node.js that runs it, not those a global `nodedir` setting names (/usr here: Node 20's).
prefix=$(dirname "$(dirname "$(command -v node)")")
[ ! -d "$prefix/include/node" ] || export npm_config_nodedir=$prefix

echo "rev $(git -C "$repo" rev-parse --short "$rev"), node $(node -v), npm $(npm -v), $(nproc) cores"
clone "$scratch/warm"
(cd "$scratch/warm" && npm ci --no-audit --no-fund --ignore-scripts >/dev/null)
rm -rf "$scratch/warm"

for run in $(seq 1 "$runs"); do
  clone "$scratch/ci-$run"
  load=$(cut -d' ' -f1 /proc/loadavg)
  started=$(date +%s%N)
  (cd "$scratch/ci-$run" && npm ci --no-audit --no-fund >"$scratch/ci-$run.log" 2>&1)
  ci=$(( ($(date +%s%N) - started) / 1000000 ))
  rm -rf "$scratch/ci-$run"

  clone "$scratch/start-$run"
  load="$load/$(cut -d' ' -f1 /proc/loadavg)"
  started=$(date +%s%N)
  (cd "$scratch/start-$run" && PORT=$port exec setsid npm start >"$scratch/start-$run.log" 2>&1) &
  pid=$!
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")" = 200 ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -30 "$scratch/start-$run.log"
      exit 1
    fi
    sleep 0.25
  done
  start=$(( ($(date +%s%N) - started) / 1000000 ))
  kill -TERM -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$scratch/start-$run"
  printf 'run %s: npm ci %d.%d s, first npm start until GET / is 200 %d.%d s (load %s)\n' \
    "$run" $((ci / 1000)) $((ci % 1000 / 100)) $((start / 1000)) $((start % 1000 / 100)) "$load"
done
