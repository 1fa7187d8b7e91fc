#!/usr/bin/env bash
# Builds the sandbox image agent-sandbox:<package.json version> with no image
# registry: a minimal Debian root filesystem made by debootstrap, imported as a
# base image, then Dockerfile.local adds the bundled daemon and a non-root user.
#
# Skips every step whose output is already up to date:
#   - the rootfs tarball is cached outside the clone, keyed by suite + packages;
#   - the base image is tagged with that same key;
#   - the final image carries a label with a hash of the daemon bundle and the
#     build inputs, and is rebuilt only when that hash changes.
#
# Environment:
#   SANDBOX_IMAGE_TAG      image tag (default agent-sandbox:<version>)
#   SANDBOX_DEBIAN_MIRROR  Debian mirror (default: the one apt is configured with)
#   AGENT_SERVER_CACHE     cache folder (default ~/.cache/agent-server)
#   SANDBOX_IMAGE_FORCE=1  rebuild the final image even when up to date
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
IMAGE_DIR="$ROOT/sandbox-daemon/image"
cd "$ROOT"

VERSION="$(node -p 'require("./package.json").version')"
TAG="${SANDBOX_IMAGE_TAG:-agent-sandbox:$VERSION}"
CACHE_DIR="${AGENT_SERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-server}"
SUITE=bookworm
# bash and coreutils are in minbase already; named so the list says what the sandbox tool promises (docs/interface.md#the-sandbox-tool).
PACKAGES="bash,coreutils,procps,python3,nodejs,git,curl,ca-certificates"

log() { echo "sandbox-image: $*" >&2; }
die() { log "error: $*"; exit 1; }

command -v docker >/dev/null || die "docker CLI not found (apt-get install -y docker.io)"
docker info >/dev/null 2>&1 || die "Docker engine unreachable (start dockerd --bridge=none --iptables=false)"

# Debian's own mirror as apt is configured here (the only reachable one on our machines).
detect_mirror() {
  { grep -hsE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources || true; } \
    | { grep -oE 'https?://[^ ]+/debian/?( |$)' || true; } | { grep -v security || true; } | sed -n '1{s/ //g;p}'
}
MIRROR="${SANDBOX_DEBIAN_MIRROR:-$(detect_mirror)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"

sha() { sha256sum | cut -c1-16; }
ROOTFS_KEY="$(printf '%s\n' "$SUITE" "$PACKAGES" "rootfs-v1" | sha)"
ROOTFS_TAR="$CACHE_DIR/sandbox-rootfs-$ROOTFS_KEY.tar"
BASE_TAG="agent-sandbox-base:$ROOTFS_KEY"

# Test files may run this concurrently: one build at a time, the others then find it done.
mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/sandbox-image.lock"
flock 9

# 1. Root filesystem (about a minute; cached across clones).
if [ ! -s "$ROOTFS_TAR" ]; then
  command -v debootstrap >/dev/null || die "debootstrap not found (apt-get install -y debootstrap)"
  [ "$(id -u)" = 0 ] || die "debootstrap needs root"
  mkdir -p "$CACHE_DIR"
  work="$(mktemp -d "$CACHE_DIR/rootfs-build.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  log "debootstrap $SUITE from $MIRROR with $PACKAGES"
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$work/rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 30 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
  # Package caches and lists are dead weight in the image.
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/* "$work"/rootfs/var/log/*
  tar --numeric-owner -C "$work/rootfs" -cf "$ROOTFS_TAR.partial" .
  mv "$ROOTFS_TAR.partial" "$ROOTFS_TAR"
  rm -rf "$work"; trap - EXIT
  log "cached $ROOTFS_TAR"
fi

# 2. Base image from the tarball.
if ! docker image inspect "$BASE_TAG" >/dev/null 2>&1; then
  log "importing $BASE_TAG"
  docker import --change 'CMD ["/bin/bash"]' "$ROOTFS_TAR" "$BASE_TAG" >/dev/null
fi

# 3. The daemon bundle (fast; always rebuilt so the hash below sees source changes).
node sandbox-daemon/bundle.mjs >/dev/null
BUNDLE="$ROOT/sandbox-daemon/dist/daemon.mjs"
[ -s "$BUNDLE" ] || die "bundle missing: $BUNDLE"

for input in "$IMAGE_DIR/Dockerfile.local" "$IMAGE_DIR/build.sh"; do [ -f "$input" ] || die "missing $input"; done
BUILD_HASH="$( { cat "$BUNDLE" "$IMAGE_DIR/Dockerfile.local" "$IMAGE_DIR/build.sh"; echo "$BASE_TAG"; } | sha)"
current="$(docker image inspect "$TAG" --format '{{ index .Config.Labels "agent-server.sandbox.build-hash" }}' 2>/dev/null || true)"
if [ "$current" = "$BUILD_HASH" ] && [ "${SANDBOX_IMAGE_FORCE:-0}" != 1 ]; then
  log "$TAG is up to date ($BUILD_HASH)"
  exit 0
fi

# 4. Final image. The context holds only what the Dockerfile copies.
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
cp "$BUNDLE" "$ctx/daemon.mjs"
log "building $TAG ($BUILD_HASH)"
docker build --network none -q \
  -f "$IMAGE_DIR/Dockerfile.local" \
  --build-arg "BASE_IMAGE=$BASE_TAG" \
  --label "agent-server.sandbox.build-hash=$BUILD_HASH" \
  --label "agent-server.sandbox.version=$VERSION" \
  -t "$TAG" "$ctx" >/dev/null
# The previous build of this tag is now untagged: drop it instead of piling up 350 MB layers.
docker image prune -f --filter "label=agent-server.sandbox.build-hash" >/dev/null || true
log "built $TAG"
