#!/usr/bin/env bash
# Builds the base image that edgegym's own Harbor test tasks start FROM, without Docker Hub:
# a Debian bookworm root filesystem from Debian's packages (mmdebstrap, minbase + bash,
# python3, ca-certificates), with the host's extra CA certificates trusted (HTTPS from a
# container is intercepted on some machines, and pip or npm inside then need that CA),
# imported with `docker import`. Cached under a tag made of this script's and the CAs'
# content hash, so it is built once per machine and rebuilt when either changes; the
# stable tag `edgegym/base:bookworm` always points at the newest build.
#
#   bash scripts/sandbox-base-image.sh        # prints the image tag
#
# Needs: docker (a daemon that answers), mmdebstrap, root (mmdebstrap's root mode).
set -euo pipefail

packages="bash,python3,ca-certificates,coreutils,procps"
ca_dir=/usr/local/share/ca-certificates
ca_hash=$( (cat "$ca_dir"/*.crt 2>/dev/null || true) | sha256sum | cut -c1-12)
script_hash=$(sha256sum "$0" | cut -c1-12)
tag="edgegym/base:bookworm-${script_hash}-${ca_hash}"

if docker image inspect "$tag" >/dev/null 2>&1; then
  docker tag "$tag" edgegym/base:bookworm
  echo "$tag"
  exit 0
fi

command -v mmdebstrap >/dev/null || { echo "mmdebstrap is needed (apt-get install mmdebstrap)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$SECONDS
# The host's extra CAs go into the root filesystem before update-ca-certificates runs in it.
mmdebstrap --quiet --variant=minbase --include="$packages" \
  --customize-hook="mkdir -p \"\$1$ca_dir\" && (cp $ca_dir/*.crt \"\$1$ca_dir/\" 2>/dev/null || true) && chroot \"\$1\" update-ca-certificates >/dev/null" \
  --customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*' \
  bookworm "$work/rootfs.tar" >&2
docker import \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'ENV LANG=C.UTF-8' \
  -c 'CMD ["/bin/bash"]' \
  "$work/rootfs.tar" "$tag" >/dev/null
docker tag "$tag" edgegym/base:bookworm
echo "built $tag in $((SECONDS - start)) s" >&2
echo "$tag"
