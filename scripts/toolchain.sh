#!/usr/bin/env bash
# Puts Node.js >= 22 and the Pulumi CLI (with a Node.js language host) on PATH, installing what is missing
# from the package registries only: Node from the npm registry, Pulumi built from the Go module proxy.
# Source it, or use run-with-toolchain.sh. Everything it installs is cached by version outside the repo.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tool_cache=${PULUMI_TFE_GOVERNANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-tfe-governance}
node_major_wanted=24

log() { echo "[toolchain] $*" >&2; }

# node:sqlite (the local server's storage) needs no flag from Node 22.13 on.
node_is_recent() {
  node -e 'const [major, minor] = process.versions.node.split(".").map(Number);
    process.exit(major > 22 || (major === 22 && minor >= 13) ? 0 : 1)' 2>/dev/null
}

ensure_node() {
  if node_is_recent; then return; fi
  local platform arch package dir
  platform=$(uname -s | tr '[:upper:]' '[:lower:]')
  case "$(uname -m)" in x86_64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
  package="node-${platform}-${arch}"
  dir="$tool_cache/node-${node_major_wanted}-${platform}-${arch}"
  if [ ! -x "$dir/node_modules/$package/bin/node" ]; then
    log "system Node is $(node --version 2>/dev/null || echo missing); installing $package@$node_major_wanted from the npm registry"
    mkdir -p "$dir"
    npm install --silent --no-save --no-audit --no-fund --prefix "$dir" "$package@$node_major_wanted" >&2
  fi
  export PATH="$dir/node_modules/$package/bin:$PATH"
  log "using Node $(node --version) from $dir"
}

pulumi_sdk_version() {
  node -p 'require(require.resolve("@pulumi/pulumi/package.json", { paths: [process.argv[1]] })).version' "$repo_root"
}

# Builds the Pulumi CLI from the Go module proxy at the version of the installed @pulumi/pulumi.
build_pulumi_cli() {
  local version=$1 bin_dir=$2 work
  command -v go >/dev/null || {
    log "no 'pulumi' on PATH and no Go toolchain to build it: install the Pulumi CLI $version, or Go >= 1.25"
    exit 1
  }
  work=$(mktemp -d)
  log "building the Pulumi CLI v$version from the Go module proxy (first run only; takes several minutes)"
  (
    cd "$work"
    go mod init pulumi-cli-build >/dev/null 2>&1
    go mod edit -require="github.com/pulumi/pulumi/pkg/v3@v$version" -require="github.com/pulumi/pulumi/sdk/v3@v$version"
    # Replace directives of a dependency are ignored by Go, so repeat pkg's own (all but its local-path ones).
    local pkg_mod
    pkg_mod=$(go mod download -json "github.com/pulumi/pulumi/pkg/v3@v$version" | node -e \
      'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).GoMod))')
    node "$repo_root/scripts/go-mod-replaces.mjs" "$pkg_mod" | while read -r replacement; do
      go mod edit -replace="$replacement"
    done
    printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"\n' > tools.go
    GOFLAGS=-mod=mod go mod tidy >&2
    go build -trimpath \
      -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$version" \
      -o "$bin_dir/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi >&2
  )
  rm -rf "$work"
}

ensure_pulumi() {
  if command -v pulumi >/dev/null && command -v pulumi-language-nodejs >/dev/null; then
    return
  fi
  local version bin_dir
  version=$(pulumi_sdk_version)
  bin_dir="$tool_cache/pulumi-v$version/bin"
  if [ ! -x "$bin_dir/pulumi" ]; then
    mkdir -p "$bin_dir"
    build_pulumi_cli "$version" "$bin_dir"
  fi
  # As in Pulumi's own distribution, the plugins sit beside the CLI: the dynamic provider script ships in
  # @pulumi/pulumi; the Node.js language host module is not served by the Go module proxy, so this repository
  # carries a small one (scripts/pulumi-language-nodejs.mjs) that runs programs with @pulumi/pulumi's cmd/run.
  cp "$repo_root/node_modules/@pulumi/pulumi/pulumi-resource-pulumi-nodejs" "$bin_dir/"
  printf '#!/bin/sh\nexec node "$PULUMI_TFE_GOVERNANCE_LANGUAGE_HOST" "$@"\n' > "$bin_dir/pulumi-language-nodejs"
  chmod +x "$bin_dir/pulumi-language-nodejs" "$bin_dir/pulumi-resource-pulumi-nodejs"
  export PULUMI_TFE_GOVERNANCE_LANGUAGE_HOST="$repo_root/scripts/pulumi-language-nodejs.mjs"
  export PATH="$bin_dir:$PATH"
  log "using $(pulumi version) from $bin_dir"
}

offline_pulumi_environment() {
  export PULUMI_SKIP_UPDATE_CHECK=true
  export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
}

ensure_node
ensure_pulumi
source "$repo_root/scripts/opa.sh" && ensure_opa
offline_pulumi_environment
