#!/usr/bin/env bash
# Everything CI checks, in order of cost: lint, typecheck, build, then every test (unit, HTTP, real engine).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
echo "== lint" && npx biome check .
# The typecheck and the build are each a compiler on one core: side by side they take the time of one, on a runner
# whose every core the tests then keep busy.
echo "== typecheck and build"
typecheck_output=$(mktemp)
npx tsc -p tsconfig.json --noEmit >"$typecheck_output" 2>&1 &
typecheck=$!
build_status=0
npm run --silent build || build_status=$?
typecheck_status=0
wait "$typecheck" || typecheck_status=$?
cat "$typecheck_output"
rm -f "$typecheck_output"
if [ "$typecheck_status" -ne 0 ]; then echo "typecheck failed" >&2; exit "$typecheck_status"; fi
if [ "$build_status" -ne 0 ]; then echo "build failed" >&2; exit "$build_status"; fi
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
