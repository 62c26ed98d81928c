#!/usr/bin/env bash
# Makes trainer-adapter/.venv-openenv: openenv-core 0.3.0 from PyPI, whose own client
# (GenericEnvClient over WebSocket, its pydantic models for the HTTP answers) drives edgegym's
# OpenEnv wire in test/openenv-client.test.ts. Pins: trainer-adapter/openenv-requirements.txt.
# Reinstalls only when that file changes; pip's cache serves repeat installs. Prints the venv's
# python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3.11}"
VENV=trainer-adapter/.venv-openenv
REQS=trainer-adapter/openenv-requirements.txt
STAMP="$VENV/.edgegym-installed"

want="$(sha256sum "$REQS" | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade "pip>=24"
  "$VENV/bin/python" -m pip install --quiet -r "$REQS"
  "$VENV/bin/python" -c "import openenv.core, importlib.metadata as m; print('openenv-core', m.version('openenv-core'))" >&2
  echo "$want" > "$STAMP"
fi
echo "$(pwd)/$VENV/bin/python"
