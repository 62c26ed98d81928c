#!/usr/bin/env bash
# `npm run dev:worker -- [--port N] [--persist-to DIR] [other wrangler dev flags]`:
# builds the console it serves when missing or stale (scripts/ensure-console.sh), applies
# the checked-in ./drizzle migrations to the local D1 database, then runs the Worker in
# workerd (wrangler dev). Listens on 127.0.0.1 unless --ip says otherwise.
#
# With EDGEGYM_HARBOR_TASKS=DIR[:DIR…] it also serves those Harbor tasks as env `harbor`, one
# Cloudflare Container per episode (docs/worker.md): scripts/worker-harbor.ts writes the
# config, and scripts/dev-worker/containers-dev.mjs applies the local Docker work-arounds
# this machine needs (and only those), then removes what wrangler leaves behind.
set -euo pipefail
cd "$(dirname "$0")/.."
export WRANGLER_SEND_METRICS=false
# edgegym reads nothing from Request.cf; without this, each start tries to download
# Cloudflare's sample of it (up to 3 s, and a warning offline).
export CLOUDFLARE_CF_FETCH_ENABLED="${CLOUDFLARE_CF_FETCH_ENABLED:-false}"

# Flags that name the database must reach both commands.
shared=()
has_ip=0
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --persist-to | -c | --config | -e | --env) shared+=("${args[i]}" "${args[i + 1]:-}") ;;
    --persist-to=* | --config=* | --env=*) shared+=("${args[i]}") ;;
    --ip | --ip=*) has_ip=1 ;;
  esac
done
ip=()
[ "$has_ip" = 1 ] || ip=(--ip 127.0.0.1)

bash scripts/ensure-console.sh

if [ -n "${EDGEGYM_HARBOR_TASKS:-}" ]; then
  for arg in "${args[@]}"; do
    case "$arg" in --config | -c | --config=*) echo "dev:worker: EDGEGYM_HARBOR_TASKS writes its own wrangler config; drop --config" >&2; exit 2 ;; esac
  done
  config=$(npx tsx scripts/worker-harbor.ts "$EDGEGYM_HARBOR_TASKS")
  # The generated config lives in .edgegym/worker-harbor/; keep the local database where the plain Worker keeps it.
  persist=()
  case " ${shared[*]} " in *" --persist-to"*) ;; *) persist=(--persist-to .wrangler/state) ;; esac
  shared+=("${persist[@]}")
  npx wrangler d1 migrations apply DB --local --config "$config" "${shared[@]}" </dev/null
  exec node scripts/dev-worker/containers-dev.mjs --config "$config" -- npx wrangler dev --config "$config" "${ip[@]}" "${persist[@]}" "$@"
fi

# stdin from /dev/null: wrangler only asks for confirmation on a terminal, and a local
# database needs none.
npx wrangler d1 migrations apply DB --local "${shared[@]}" </dev/null
exec npx wrangler dev "${ip[@]}" "$@"
