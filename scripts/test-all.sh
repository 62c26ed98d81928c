#!/usr/bin/env bash
# `npm test`: every test of the project, TypeScript then Python.
set -euo pipefail
cd "$(dirname "$0")/.."

npm run build --silent
npx vitest run

if [ -f trainer-adapter/pyproject.toml ] && [ "${EDGEGYM_SKIP_PYTHON:-0}" != "1" ]; then
  bash scripts/test-python.sh
fi
