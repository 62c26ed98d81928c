#!/usr/bin/env bash
# Makes trainer-adapter/.venv-mcp: the official MCP Python SDK (PyPI `mcp`, pinned with its
# dependencies in trainer-adapter/mcp-client-requirements.txt) for the test that plays an
# edgegym episode through /mcp/episodes/{id} with it (tests/test_mcp_python_client.py).
# Reinstalls only when that file changes; pip's cache serves repeat installs. Prints the
# venv's python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/pinned-venv.sh
source scripts/lib/pinned-venv.sh

pinned_venv trainer-adapter/.venv-mcp \
  "import mcp, importlib.metadata as m; print('mcp', m.version('mcp'))" \
  --no-deps trainer-adapter/mcp-client-requirements.txt
