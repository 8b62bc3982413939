#!/usr/bin/env bash
# Prints the shell lines that put the project's toolchain (Node >= 22.19, pulumi with its Node.js language host,
# opa) on an interactive shell's PATH, installing what is missing first:
#   eval "$(npm run -s env)"
# It runs in a process of its own, so the shell's options stay as they were; progress goes to stderr.
set -euo pipefail
path_before=$PATH
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
# Only the directories the toolchain put in front: npm run adds its own (node_modules/.bin) to this process's PATH.
added=${PATH%"$path_before"}
if [ -n "$added" ]; then printf 'export PATH=%q"$PATH"\n' "$added"; fi
echo "export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true"
