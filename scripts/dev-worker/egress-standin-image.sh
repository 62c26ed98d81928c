#!/usr/bin/env bash
# Builds edgegym's stand-in for Cloudflare's container networking sidecar (egress-standin.py) as
# an image, for MINIFLARE_CONTAINER_EGRESS_IMAGE under `wrangler dev` on machines that cannot pull
# `cloudflare/proxy-everything` (dev only; containers-dev.mjs calls it when needed).
#
#   bash scripts/dev-worker/egress-standin-image.sh    # prints the image tag
#
# FROM edgegym/base:bookworm (scripts/sandbox-base-image.sh builds it offline, and is run here when
# it is missing). A self-signed, test-only CA certificate is made with openssl at build time (the
# sidecar's `GET /ca`; its key never leaves the image). Tagged edgegym/egress-standin:<hash of this
# script, egress-standin.py and the base image's id>, and built only when that tag is missing (older
# stand-in tags are then removed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
base=edgegym/base:bookworm

if ! docker image inspect "$base" >/dev/null 2>&1; then
  bash "$here/../sandbox-base-image.sh" >&2
fi
base_id=$(docker image inspect --format '{{.Id}}' "$base")
hash=$( (cat "$here/egress-standin-image.sh" "$here/egress-standin.py"; echo "$base_id") | sha256sum | cut -c1-12)
tag="edgegym/egress-standin:$hash"

if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/egress-standin.py" "$work/egress-standin.py"
cat >"$work/Dockerfile" <<EOF
FROM $base
LABEL org.opencontainers.image.title="edgegym egress stand-in (dev only)" \\
      org.opencontainers.image.description="Stands in for cloudflare/proxy-everything under wrangler dev; egress policy is not emulated"
COPY egress-standin.py /usr/local/bin/egress-standin.py
RUN mkdir -p /etc/edgegym-egress \\
 && openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=edgegym egress stand-in (test only)" \\
      -keyout /etc/edgegym-egress/ca-key.pem -out /etc/edgegym-egress/ca.pem 2>/dev/null \\
 && chmod 600 /etc/edgegym-egress/ca-key.pem
ENTRYPOINT ["python3", "-u", "/usr/local/bin/egress-standin.py"]
EOF
# The legacy builder where buildx is missing (docker 20.10 as Debian ships it).
buildkit=()
docker buildx version >/dev/null 2>&1 || buildkit=(env DOCKER_BUILDKIT=0)
start=$SECONDS
${buildkit[@]+"${buildkit[@]}"} docker build --force-rm -q -t "$tag" "$work" >&2
echo "built $tag in $((SECONDS - start)) s" >&2
# Older builds of the stand-in go (untag only; one still used by a container stays).
docker image ls --format '{{.Repository}}:{{.Tag}}' edgegym/egress-standin | grep -vxF "$tag" | while read -r old; do
  docker rmi "$old" >/dev/null 2>&1 || true
done
echo "$tag"
