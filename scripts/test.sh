#!/usr/bin/env bash
# Everything CI checks, in order of cost: typecheck, lint, build, then every test (unit, HTTP, real engine).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
echo "== typecheck" && npx tsc -p tsconfig.json --noEmit
echo "== lint" && npx biome check .
echo "== build" && npm run --silent build
echo "== tests" && npx vitest run "$@"
