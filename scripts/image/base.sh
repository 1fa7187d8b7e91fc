#!/usr/bin/env bash
# The server image's base, built with no image registry: a debootstrap'd
# Debian (cached as a tarball outside the clone, like the sandbox image's)
# from which only what the image runs is kept -- glibc, libgcc and libstdc++
# (node and the native modules), dash (the entrypoint), `sleep` (the Helm
# chart's preStop hook) and the CA bundle -- plus a passwd entry for uid 1000.
# Imported with `docker import`; prints the base image's tag on stdout.
#
# Called by build.sh (which holds the build lock); the environment it reads:
#   CACHE_DIR, SERVER_DEBIAN_MIRROR (default: the mirror apt is configured with)
set -euo pipefail

SUITE=bookworm
# minbase has libc6, libgcc-s1, libstdc++6, dash and coreutils already.
DEBOOTSTRAP_INCLUDE="ca-certificates"
# Packages whose files the base keeps (coreutils: `sleep` only, see below).
KEEP_PACKAGES="libc6 libgcc-s1 libstdc++6 dash"
# Bump when the selection below changes: the base image's tag follows it.
SELECTION_VERSION="base-v1"

log() { echo "server-image: $*" >&2; }
die() { log "error: $*"; exit 1; }
sha() { sha256sum | cut -c1-16; }

# Debian's own mirror as apt is configured here (the only reachable one on our machines).
detect_mirror() {
  { grep -hsE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources || true; } \
    | { grep -oE 'https?://[^ ]+/debian/?( |$)' || true; } | { grep -v security || true; } | sed -n '1{s/ //g;p}'
}

ROOTFS_KEY="$(printf '%s\n' "$SUITE" "$DEBOOTSTRAP_INCLUDE" "rootfs-v1" | sha)"
ROOTFS_TAR="$CACHE_DIR/server-rootfs-$ROOTFS_KEY.tar"
BASE_KEY="$( { echo "$ROOTFS_KEY $KEEP_PACKAGES $SELECTION_VERSION"; cat "${BASH_SOURCE[0]}"; } | sha)"
BASE_TAG="agent-server-base:$BASE_KEY"

if docker image inspect "$BASE_TAG" >/dev/null 2>&1; then
  echo "$BASE_TAG"
  exit 0
fi

work="$(mktemp -d "$CACHE_DIR/server-base.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# 1. The full Debian root filesystem (about a minute; cached across clones).
if [ ! -s "$ROOTFS_TAR" ]; then
  command -v debootstrap >/dev/null || die "debootstrap not found (apt-get install -y debootstrap)"
  [ "$(id -u)" = 0 ] || die "debootstrap needs root"
  mirror="${SERVER_DEBIAN_MIRROR:-$(detect_mirror)}"
  mirror="${mirror:-http://deb.debian.org/debian}"
  log "debootstrap $SUITE from $mirror"
  debootstrap --variant=minbase --include="$DEBOOTSTRAP_INCLUDE" "$SUITE" "$work/debootstrap" "$mirror" \
    >"$work/debootstrap.log" 2>&1 || { tail -n 30 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
  tar --numeric-owner -C "$work/debootstrap" -cf "$ROOTFS_TAR.partial" .
  mv "$ROOTFS_TAR.partial" "$ROOTFS_TAR"
  rm -rf "$work/debootstrap"
  log "cached $ROOTFS_TAR"
fi

# 2. The selection: the kept packages' files, documentation left out.
rootfs="$work/rootfs"
mkdir -p "$rootfs"
tar --numeric-owner -C "$rootfs" -xf "$ROOTFS_TAR"
info="$rootfs/var/lib/dpkg/info"
arch="$(sed -n 's/^Architecture: //p' "$rootfs/var/lib/dpkg/status" | grep -vx all | head -n1)"
{
  for pkg in $KEEP_PACKAGES; do
    cat "$info/$pkg:$arch.list" 2>/dev/null || cat "$info/$pkg.list" 2>/dev/null || die "package $pkg is not in the root filesystem"
  done
  echo /bin/sleep
} >"$work/listed"
# Debian's merged /usr: /bin, /lib… are symlinks into /usr, but package lists still name the old paths.
merged=""
[ -L "$rootfs/bin" ] && merged=1
grep -vE '^/\.?$|^/usr/share/(doc|man|info|lintian|locale|bug)(/|$)' "$work/listed" \
  | { if [ -n "$merged" ]; then sed -E 's#^/(bin|sbin|lib|lib64)(/|$)#/usr/\1\2#'; else cat; fi; } \
  | sed 's#^/#./#' | LC_ALL=C sort -u >"$work/files"
base="$work/base"
mkdir -p "$base"
tar --numeric-owner -C "$rootfs" --no-recursion -cf - -T "$work/files" | tar --numeric-owner -C "$base" -xf -
if [ -n "$merged" ]; then
  for d in bin sbin lib lib64; do [ -e "$base/usr/$d" ] && ln -s "usr/$d" "$base/$d"; done
fi
[ -e "$base/usr/bin/sh" ] || ln -s dash "$base/usr/bin/sh"
# The CA bundle that ca-certificates' install script generated (Temporal's native client reads the system roots).
mkdir -p "$base/etc/ssl/certs"
cp "$rootfs/etc/ssl/certs/ca-certificates.crt" "$base/etc/ssl/certs/"
# What scanners look at: the distribution, and the packages whose files are here.
cp -P "$rootfs/etc/os-release" "$base/etc/" && mkdir -p "$base/usr/lib" && cp "$rootfs/usr/lib/os-release" "$base/usr/lib/"
mkdir -p "$base/var/lib/dpkg"
awk -v keep=" $KEEP_PACKAGES coreutils ca-certificates " 'BEGIN { RS = ""; ORS = "\n\n" }
  { split($0, f, "\n"); name = substr(f[1], 10); if (index(keep, " " name " ")) print }' \
  "$rootfs/var/lib/dpkg/status" >"$base/var/lib/dpkg/status"

# 3. Users and the writable /tmp (the only writable path at run time: the root filesystem is read-only).
cat >"$base/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/usr/sbin/nologin
agent:x:1000:1000:agent-server:/tmp:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
cat >"$base/etc/group" <<'EOF'
root:x:0:
agent:x:1000:
nogroup:x:65534:
EOF
printf 'hosts: files dns\n' >"$base/etc/nsswitch.conf"
mkdir -p "$base/tmp" "$base/root" "$base/app"
chmod 1777 "$base/tmp"
chmod 700 "$base/root"

log "importing $BASE_TAG ($(du -sh "$base" | cut -f1))"
tar --numeric-owner -C "$base" -cf - . | docker import - "$BASE_TAG" >/dev/null
echo "$BASE_TAG"
