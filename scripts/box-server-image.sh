#!/usr/bin/env bash
# Builds the image holding edgegym's box server (box-server/, Go, standard library only) as
# one static binary, /edgegym-box-server, on `scratch`: the Worker build's task images copy
# it in (scripts/worker-harbor.ts):
#
#   COPY --from=edgegym/box-server:<tag> /edgegym-box-server /usr/local/bin/edgegym-box-server
#
# Go comes from Debian's golang-go inside the build (bookworm: Go 1.19, hence `go 1.19` in
# box-server/go.mod), so the host needs Docker and edgegym/base:bookworm
# (scripts/sandbox-base-image.sh, built here when missing), not Go. Docker's legacy builder
# does it (no buildx): the Dockerfile is written to a temporary context.
#
# Cached under a tag made of the names and contents of box-server/'s files and of this
# script: a no-op when that tag exists. `edgegym/box-server:current` points at the newest.
#
#   bash scripts/box-server-image.sh        # prints the image tag on stdout; phases on stderr
set -euo pipefail
cd "$(dirname "$0")/.."

hash=$( (sha256sum scripts/box-server-image.sh; find box-server -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16)
tag="edgegym/box-server:${hash}"
if docker image inspect "$tag" >/dev/null 2>&1; then
  docker tag "$tag" edgegym/box-server:current
  echo "$tag"
  exit 0
fi

start=$SECONDS
phase() { echo "box-server-image: +$((SECONDS - start)) s $*" >&2; }

if ! docker image inspect edgegym/base:bookworm >/dev/null 2>&1; then
  phase "building edgegym/base:bookworm"
  bash scripts/sandbox-base-image.sh >&2
fi

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp -r box-server "$context/src"
cat > "$context/Dockerfile" <<'DOCKERFILE'
# Stage 1: Debian's Go, cached by the builder across source changes (this layer comes first).
FROM edgegym/base:bookworm AS build
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends golang-go >/dev/null \
 && rm -rf /var/lib/apt/lists/*
# Static (no cgo, no NSS: users.go reads /etc/passwd itself), reproducible paths, no symbols.
ENV CGO_ENABLED=0 GOFLAGS=-mod=mod GOCACHE=/var/cache/go-build GOPATH=/tmp/go GOPROXY=off
# The standard library compiled once into this layer's build cache (minutes on two cores):
# a change of box-server/ then compiles and vets its own package only.
RUN go build -trimpath std
COPY src /src
WORKDIR /src
RUN go vet ./... && go build -trimpath -ldflags="-s -w" -o /edgegym-box-server .

# Stage 2: the binary alone; images that need it COPY --from this one.
FROM scratch
COPY --from=build /edgegym-box-server /edgegym-box-server
ENTRYPOINT ["/edgegym-box-server"]
DOCKERFILE

# The legacy builder prints "Step n/m : ..." per instruction: each is stamped with the time
# since the start (the apt step is the long one, once per machine), the full log is kept for
# a failure.
log="$context/build.log"
phase "docker build $tag"
if ! DOCKER_BUILDKIT=0 docker build --force-rm -t "$tag" --label edgegym.role=box-server "$context" 2>&1 \
  | tee "$log" | while IFS= read -r line; do
      case "$line" in Step*) phase "${line:0:110}" ;; esac
    done; then
  tail -n 60 "$log" >&2
  echo "box-server-image: docker build failed" >&2
  exit 1
fi
docker tag "$tag" edgegym/box-server:current
phase "built $tag ($(docker image inspect -f '{{.Size}}' "$tag") bytes)"
echo "$tag"
