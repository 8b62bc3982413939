#!/usr/bin/env bash
# Prints the shell lines that put the project's toolchain on an interactive shell's PATH, installing what is missing
# first:
#   eval "$(npm run -s env)"                 node (>= 22.19), pulumi with its Node.js and YAML hosts, opa,
#                                            tfe-governance and tfe-governance-server
#   eval "$(npm run -s env -- python go)"    the same, and Pulumi's Python and Go language hosts
# It changes PATH and nothing else: Pulumi's own settings (PULUMI_*) stay the shell's. It says nothing unless it has
# something to build (progress on stderr). It runs in a process of its own, so the shell's options stay as they were.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
path_before=$PATH
# What the shell gets: what the quickstart builds (OPA, the YAML host), and the tools named as arguments, of: python
# go sdkgen chromium. Building nothing else: the tests build the rest when they need it.
for tool in "$@"; do
  case "$tool" in
    python | go | sdkgen | chromium) ;;
    *) echo "env: no tool \"$tool\": name any of python go sdkgen chromium (node, pulumi, opa and the YAML host come anyway)" >&2; exit 2 ;;
  esac
done
export TOOLCHAIN_TOOLS="opa yaml $*"
export TOOLCHAIN_QUIET=1
source "$repo/scripts/toolchain.sh"

# The project's own commands, as `npx` runs them where the package is installed: a directory holding only them (not
# node_modules/.bin, whose tools would shadow the shell's), each run by the Node.js this toolchain found.
commands_dir="$tool_cache/commands-$(printf '%s' "$repo" | cksum | cut -d' ' -f1)"
mkdir -p "$commands_dir"
node_bin=$(command -v node)
write_command() {
  local name=$1 entry=$2 file="$commands_dir/$1"
  cat > "$file.$$" <<END
#!/bin/sh
# $name of the clone $repo (written by its scripts/env.sh).
if [ ! -f "$repo/$entry" ]; then
  echo "$name: $repo/$entry is not built: run npm ci (or npm run build) in $repo" >&2
  exit 1
fi
exec "$node_bin" "$repo/$entry" "\$@"
END
  chmod +x "$file.$$"
  mv -f "$file.$$" "$file"
}
write_command tfe-governance dist/cli/tfe-governance.js
write_command tfe-governance-server dist/server/cli.js
export PATH="$commands_dir:$PATH"

# Only the directories put in front here: npm run adds its own (node_modules/.bin) to this process's PATH.
added=${PATH%"$path_before"}
if [ -n "$added" ]; then printf 'export PATH=%q"$PATH"\n' "$added"; fi
