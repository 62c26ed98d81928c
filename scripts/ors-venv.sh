#!/usr/bin/env bash
# Makes trainer-adapter/.venv-ors: openreward 0.1.167 from PyPI, whose own client (OpenReward,
# its environments and sessions API) drives edgegym's ORS wire in test/ors-client.test.ts, and
# TRL 1.16.0 without its dependencies, for its ORS adapter (trl.experimental.openreward), which
# imports no torch. Pins: trainer-adapter/ors-requirements.txt, ors-trl-requirements.txt.
# Reinstalls only when that file changes; pip's cache serves repeat installs. Prints the venv's
# python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3.11}"
VENV=trainer-adapter/.venv-ors
REQS=trainer-adapter/ors-requirements.txt
TRL_REQS=trainer-adapter/ors-trl-requirements.txt
STAMP="$VENV/.edgegym-installed"

want="$(cat "$REQS" "$TRL_REQS" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade "pip>=24"
  "$VENV/bin/python" -m pip install --quiet -r "$REQS"
  "$VENV/bin/python" -m pip install --quiet --no-deps -r "$TRL_REQS"
  "$VENV/bin/python" -c "import openreward, importlib.metadata as m; import trl.experimental.openreward; print('openreward', m.version('openreward'), 'trl', m.version('trl'))" >&2
  echo "$want" > "$STAMP"
fi
echo "$(pwd)/$VENV/bin/python"
