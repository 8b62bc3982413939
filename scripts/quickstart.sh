#!/usr/bin/env bash
# The main job: start the local server with seed data, run `pulumi up` of the quickstart program (Pulumi.yaml)
# against it on a local file backend, and print what it made. No account needed. Re-running is idempotent:
# the server's data and the stack's state live under .tfe/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
node scripts/build-when-stale.mjs
exec node scripts/quickstart.mjs "$@"
