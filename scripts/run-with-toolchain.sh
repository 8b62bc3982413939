#!/usr/bin/env bash
# Runs a command with the project's toolchain (see toolchain.sh) on PATH.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
exec "$@"
