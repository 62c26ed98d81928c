#!/usr/bin/env bash
# WRANGLER_DOCKER_BIN for `wrangler dev` with Cloudflare Containers on a Docker without buildx
# (dev only: scripts/dev-worker/containers-dev.mjs sets it when needed; `npm run deploy` never does).
#
# - `build` / `image build`: drops `--load` and `--provenance=false` (BuildKit-only flags that
#   wrangler always passes) and runs the legacy builder (DOCKER_BUILDKIT=0). `--platform` stays:
#   the legacy builder of docker 20.10 accepts it.
# - `pull IMAGE` / `image pull IMAGE`: does nothing when `docker image inspect IMAGE` succeeds
#   (wrangler pulls its networking sidecar at every start, and images built here are in no registry);
#   else the real pull.
# - everything else: the real docker, unchanged.
#
# The real docker is $EDGEGYM_REAL_DOCKER, else the first `docker` on PATH that is not this script.
set -euo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
docker="${EDGEGYM_REAL_DOCKER:-}"
if [ -z "$docker" ]; then
  while IFS= read -r candidate; do
    if [ "$(readlink -f "$candidate")" != "$self" ]; then docker=$candidate; break; fi
  done < <(type -ap docker)
fi
if [ -z "$docker" ] || [ "$(readlink -f "$docker")" = "$self" ]; then
  echo "docker-wrapper: no docker found on PATH (set EDGEGYM_REAL_DOCKER)" >&2
  exit 127
fi

# The subcommand is the first word after docker's global options (those below take a value).
globals=()
args=("$@")
i=0
while [ $i -lt ${#args[@]} ]; do
  case "${args[i]}" in
    -H | --host | -c | --context | --config | -l | --log-level | --tlscacert | --tlscert | --tlskey)
      globals+=("${args[i]}" "${args[i + 1]:-}"); i=$((i + 2)) ;;
    -*) globals+=("${args[i]}"); i=$((i + 1)) ;;
    *) break ;;
  esac
done
rest=(${args[@]+"${args[@]:i}"})
cmd="${rest[0]:-}"
prefix=("$cmd")
if [ "$cmd" = image ] && [ ${#rest[@]} -gt 1 ]; then
  cmd="${rest[1]}"
  prefix=(image "$cmd")
fi
sub=(${rest[@]+"${rest[@]:${#prefix[@]}}"})

case "$cmd" in
  build)
    kept=()
    for arg in ${sub[@]+"${sub[@]}"}; do
      case "$arg" in
        --load | --provenance=false) ;;
        *) kept+=("$arg") ;;
      esac
    done
    DOCKER_BUILDKIT=0 exec "$docker" ${globals[@]+"${globals[@]}"} "${prefix[@]}" ${kept[@]+"${kept[@]}"}
    ;;
  pull)
    image=""
    j=0
    while [ $j -lt ${#sub[@]} ]; do
      case "${sub[j]}" in
        --platform) j=$((j + 2)) ;;
        -*) j=$((j + 1)) ;;
        *) image="${sub[j]}"; break ;;
      esac
    done
    if [ -n "$image" ] && "$docker" ${globals[@]+"${globals[@]}"} image inspect "$image" >/dev/null 2>&1; then
      exit 0
    fi
    ;;
esac
exec "$docker" "$@"
