#!/bin/sh
# The server image's entrypoint (/usr/local/bin/agent-server): the first
# argument is the role, as the Helm chart passes it (api.args, worker.args,
# migrations.args). Each role runs what its npm script runs, on the output of
# `npm run build:server` instead of tsx; `exec` leaves node as the container's
# main process, so SIGTERM reaches its graceful shutdown directly.
set -eu
cd /app
role="${1:-api}"
[ $# -gt 0 ] && shift
case "$role" in
  api)
    # `npm run api`'s V8 settings (docs/deploy.md, "Memory"). A NODE_OPTIONS given to
    # the container comes after them, so its own heap cap wins (the chart's api.nodeOptions).
    NODE_OPTIONS="--max-old-space-size=1024 --max-semi-space-size=64${NODE_OPTIONS:+ $NODE_OPTIONS}"
    export NODE_OPTIONS
    exec node api/server.js "$@"
    ;;
  worker) exec node activities/worker.js "$@" ;;
  migrate) exec node scripts/db.js migrate "$@" ;;
  rollback) exec node scripts/db.js rollback "$@" ;;
  rotate-secrets) exec node scripts/rotate-secrets.js "$@" ;;
  *)
    echo "agent-server: unknown role '$role' (api, worker, migrate, rollback [--all], rotate-secrets)" >&2
    exit 64
    ;;
esac
