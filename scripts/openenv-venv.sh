#!/usr/bin/env bash
# Makes trainer-adapter/.venv-openenv: openenv-core 0.3.0 from PyPI, whose own client
# (GenericEnvClient over WebSocket, its pydantic models for the HTTP answers) drives edgegym's
# OpenEnv wire in test/openenv-client.test.ts. Pins: trainer-adapter/openenv-requirements.txt.
# Reinstalls only when that file changes; pip's cache serves repeat installs. Prints the venv's
# python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/pinned-venv.sh
source scripts/lib/pinned-venv.sh

pinned_venv trainer-adapter/.venv-openenv \
  "import openenv.core, importlib.metadata as m; print('openenv-core', m.version('openenv-core'))" \
  trainer-adapter/openenv-requirements.txt
