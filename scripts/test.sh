#!/usr/bin/env bash
# Everything CI checks, in order of cost: typecheck, lint, build, then every test (unit, HTTP, real engine).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
echo "== typecheck" && npx tsc -p tsconfig.json --noEmit
echo "== lint" && npx biome check .
echo "== build" && npm run --silent build
echo "== tests"
results=$(mktemp)
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$results" "$@" || status=$?
# The plain closing line any CI can read, whatever it knows of vitest.
node -e 'const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`)' "$results" \
  || echo "0 passed, 1 failed"
rm -f "$results"
exit "$status"
