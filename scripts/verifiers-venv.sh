#!/usr/bin/env bash
# Makes trainer-adapter/.venv-vf03 (verifiers 0.3.1) or trainer-adapter/.venv-vf04 (verifiers 0.4.0)
# from PyPI, for test/verifiers-formats.test.ts: each verifiers generation's own loader reads
# edgegym's run files, and its own writer makes runs edgegym reads. Usage: verifiers-venv.sh vf03|vf04.
# Every package is pinned in trainer-adapter/<gen>-requirements.txt (what pip resolved for
# `verifiers==X`; neither pulls torch) and installed with --no-deps, so the set never drifts.
# Reinstalls only when that file changes; pip's cache serves repeat installs. Prints the venv's
# python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/pinned-venv.sh
source scripts/lib/pinned-venv.sh

GEN="${1:?usage: verifiers-venv.sh vf03|vf04}"
case "$GEN" in vf03|vf04) ;; *) echo "unknown generation $GEN (vf03 or vf04)" >&2; exit 2 ;; esac
pinned_venv "trainer-adapter/.venv-$GEN" \
  "import importlib.metadata as m; print('verifiers', m.version('verifiers'))" \
  --no-deps "trainer-adapter/$GEN-requirements.txt"
