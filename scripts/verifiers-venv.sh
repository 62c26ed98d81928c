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

GEN="${1:?usage: verifiers-venv.sh vf03|vf04}"
case "$GEN" in vf03|vf04) ;; *) echo "unknown generation $GEN (vf03 or vf04)" >&2; exit 2 ;; esac
PY="${PYTHON:-python3.11}"
VENV="trainer-adapter/.venv-$GEN"
REQS="trainer-adapter/$GEN-requirements.txt"
STAMP="$VENV/.edgegym-installed"

want="$(sha256sum "$REQS" | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade "pip>=24"
  "$VENV/bin/python" -m pip install --quiet --no-deps -r "$REQS"
  "$VENV/bin/python" -c "import importlib.metadata as m; print('verifiers', m.version('verifiers'))" >&2
  echo "$want" > "$STAMP"
fi
echo "$(pwd)/$VENV/bin/python"
