#!/usr/bin/env bash
# Makes trainer-adapter/.venv-mcp: the official MCP Python SDK (PyPI `mcp`, pinned with its
# dependencies in trainer-adapter/mcp-client-requirements.txt) for the test that plays an
# edgegym episode through /mcp/episodes/{id} with it (tests/test_mcp_python_client.py).
# Reinstalls only when that file changes; pip's cache serves repeat installs. Prints the
# venv's python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3.11}"
VENV=trainer-adapter/.venv-mcp
REQS=trainer-adapter/mcp-client-requirements.txt
STAMP="$VENV/.edgegym-installed"

want="$(sha256sum "$REQS" | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade "pip>=24"
  "$VENV/bin/python" -m pip install --quiet --no-deps -r "$REQS"
  "$VENV/bin/python" -c "import mcp, importlib.metadata as m; print('mcp', m.version('mcp'))" >&2
  echo "$want" > "$STAMP"
fi
echo "$(pwd)/$VENV/bin/python"
