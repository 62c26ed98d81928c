#!/usr/bin/env bash
# `npm test`: every test of the project, TypeScript then Python.
set -euo pipefail
cd "$(dirname "$0")/.."

export WRANGLER_SEND_METRICS=false

npm run build --silent
npx vitest run
# Tests that run inside workerd (the Workers runtime) with a local D1.
npx vitest run --config vitest.workerd.config.ts

if [ -f trainer-adapter/pyproject.toml ] && [ "${EDGEGYM_SKIP_PYTHON:-0}" != "1" ]; then
  bash scripts/test-python.sh
fi
