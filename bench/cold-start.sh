#!/usr/bin/env bash
# A fresh machine's first run, timed: a clone of the committed tree, then `npm ci` and `npm run quickstart` with
# every cache empty (npm's, Go's module and build caches, the toolchain's) and no pulumi or opa on PATH. Prints the
# time of each phase and of each toolchain build, and writes bench/results/cold-start.md. Nothing is asserted.
#
#   bash bench/cold-start.sh            # about five to fifteen minutes on two cores, most of it compiling Go
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

export npm_config_cache="$work/npm-cache"
export GOCACHE="$work/go-build" GOMODCACHE="$work/go-mod"
export PULUMI_TFE_GOVERNANCE_CACHE="$work/tool-cache"
export QUICKSTART_DATA_DIR="$work/quickstart-data"
# The system's directories only: no pulumi, opa or newer Node that an earlier run put on this PATH.
PATH=$(echo "$PATH" | tr ':' '\n' | grep -v -e pulumi-tfe-governance -e '/node_modules/' | paste -sd: -)
export PATH

git clone -q "$repo_root" "$work/clone"
cd "$work/clone"
commit=$(git rev-parse --short HEAD)
log="$work/quickstart.log"

phase() {
  local name=$1 started=$SECONDS
  shift
  "$@" >>"$log" 2>&1 || { echo "$name failed; the end of its output:" >&2; tail -n 40 "$log" >&2; exit 1; }
  echo "$name: $((SECONDS - started)) s"
}

{
  echo "# Cold start, $(date -u +%Y-%m-%d), commit $commit, $(nproc) cores"
  echo
  echo "Empty npm, Go and toolchain caches; system Node $(node --version 2>/dev/null || echo none); go $(go env GOVERSION)."
  echo
  total=$SECONDS
  phase "npm ci" npm ci --no-audit --no-fund
  phase "npm run quickstart" npm run quickstart
  echo "total: $((SECONDS - total)) s"
  echo
  echo "Toolchain builds (they run side by side):"
  grep -E '^\[toolchain\] (built|installing)' "$log" | sed 's/^/    /' || true
} | tee "$repo_root/bench/results/cold-start.md"
