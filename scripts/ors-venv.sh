#!/usr/bin/env bash
# Makes trainer-adapter/.venv-ors: openreward 0.1.167 from PyPI, whose own client (OpenReward,
# its environments and sessions API) drives edgegym's ORS wire in test/ors-client.test.ts, and
# TRL 1.16.0 without its dependencies, for its ORS adapter (trl.experimental.openreward), which
# imports no torch. Pins: trainer-adapter/ors-requirements.txt, ors-trl-requirements.txt.
# Reinstalls only when that file changes; pip's cache serves repeat installs. Prints the venv's
# python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/pinned-venv.sh
source scripts/lib/pinned-venv.sh

pinned_venv trainer-adapter/.venv-ors \
  "import openreward, importlib.metadata as m; import trl.experimental.openreward; print('openreward', m.version('openreward'), 'trl', m.version('trl'))" \
  trainer-adapter/ors-requirements.txt --no-deps trainer-adapter/ors-trl-requirements.txt
