#!/usr/bin/env bash
# Builds the web console (/ui) and the offline API reference (/docs) into dist/console when
# they are missing or older than console/. The Worker serves them as its static assets
# (wrangler.jsonc `assets`), and wrangler will not start or deploy without that folder; a
# fresh clone has none (`npm start` compiles only the server). `npm run dev:worker` and
# `npm run deploy` run this first; `npm run build` builds it always.
set -euo pipefail
cd "$(dirname "$0")/.."

current() {
  [ -f dist/console/ui/index.html ] && [ -f dist/console/docs/init.js ] &&
    [ -z "$(find console -newer dist/console/ui/index.html -print -quit)" ]
}
current && exit 0
# Two Workers started at once (the test suites do) build once: the second waits, then finds it current.
mkdir -p dist
if command -v flock >/dev/null 2>&1; then
  exec 9>dist/.console-build.lock
  flock 9
  current && exit 0
fi
echo "edgegym: building the web console into dist/console (npm run build:console)…" >&2
npx vite build --config console/vite.config.ts
