#!/usr/bin/env bash
# Puts Node.js >= 22.19 and the Pulumi CLI with Pulumi's Node.js language host on PATH, installing what is missing
# from the package registries only: Node from the npm registry, Pulumi built from the Go module proxy.
# Source it, or use run-with-toolchain.sh. Everything it installs is cached by version outside the repo.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tool_cache=${PULUMI_TFE_GOVERNANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-tfe-governance}
node_major_wanted=24
# The last release whose sdk/v3 module still holds Pulumi's Node.js language host: later releases moved it into a
# module of its own, which the Go module proxy does not serve. README ("The two commands") says what it lacks.
nodejs_language_host_version=3.68.0

log() { echo "[toolchain] $*" >&2; }

# The highest minimum among the dependencies: undici 8 declares engines >=22.19.0 (package.json says the same).
node_is_recent() {
  node -e 'const [major, minor] = process.versions.node.split(".").map(Number);
    process.exit(major > 22 || (major === 22 && minor >= 19) ? 0 : 1)' 2>/dev/null
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
  local manifest="$repo_root/node_modules/@pulumi/pulumi/package.json"
  if [ ! -f "$manifest" ]; then
    log "@pulumi/pulumi is not installed, and the Pulumi CLI is built at its version: run 'npm ci' in $repo_root first"
    exit 1
  fi
  node -p 'require(process.argv[1]).version' "$manifest"
}

# Builds one program of github.com/pulumi/pulumi from the Go module proxy: a throwaway module requiring the given
# modules at one version, with the first module's replace directives repeated (Go ignores a dependency's own, all
# but the local-path ones), and the version stamped where `pulumi version` and the plugin's info read it.
build_pulumi_program() {
  local version=$1 package=$2 output=$3 work go_mod module
  shift 3
  command -v go >/dev/null || {
    log "no 'pulumi' with its Node.js language host on PATH, and no Go toolchain to build them: install the Pulumi CLI $version, or Go >= 1.25"
    exit 1
  }
  work=$(mktemp -d)
  (
    cd "$work"
    go mod init pulumi-tfe-governance-build >/dev/null 2>&1
    for module in "$@"; do go mod edit -require="$module@v$version"; done
    go_mod=$(go mod download -json "$1@v$version" | node -e \
      'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).GoMod))')
    node "$repo_root/scripts/go-mod-replaces.mjs" "$go_mod" | while read -r replacement; do
      go mod edit -replace="$replacement"
    done
    printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$package" > tools.go
    GOFLAGS=-mod=mod go mod tidy >&2
    go build -trimpath \
      -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$version" \
      -o "$output" "$package" >&2
  )
  rm -rf "$work"
}

# Copies an executable into a directory unless the same file is there; by rename, so that a run still using the old
# copy keeps it.
place_beside() {
  local dir=$1 source=$2 name
  name=$(basename "$source")
  cmp -s "$source" "$dir/$name" && return
  cp "$source" "$dir/.$name.$$"
  chmod +x "$dir/.$name.$$"
  mv -f "$dir/.$name.$$" "$dir/$name"
}

ensure_pulumi() {
  if command -v pulumi >/dev/null && command -v pulumi-language-nodejs >/dev/null; then
    return
  fi
  local version bin_dir language_host
  version=$(pulumi_sdk_version)
  bin_dir="$tool_cache/pulumi-v$version/bin"
  if [ ! -x "$bin_dir/pulumi" ]; then
    log "building the Pulumi CLI v$version from the Go module proxy (first run only; takes several minutes)"
    mkdir -p "$bin_dir"
    build_pulumi_program "$version" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi "$bin_dir/pulumi" \
      github.com/pulumi/pulumi/pkg/v3 github.com/pulumi/pulumi/sdk/v3
  fi
  language_host="$tool_cache/pulumi-language-nodejs-v$nodejs_language_host_version/pulumi-language-nodejs"
  if [ ! -x "$language_host" ]; then
    log "building Pulumi's Node.js language host v$nodejs_language_host_version from the Go module proxy (first run only; about a minute)"
    build_pulumi_program "$nodejs_language_host_version" github.com/pulumi/pulumi/sdk/v3/nodejs/cmd/pulumi-language-nodejs \
      "$language_host" github.com/pulumi/pulumi/sdk/v3
  fi
  # Laid out as Pulumi's own distribution: the CLI loads the language host and the dynamic provider (which ships in
  # @pulumi/pulumi) from beside itself.
  place_beside "$bin_dir" "$language_host"
  place_beside "$bin_dir" "$repo_root/node_modules/@pulumi/pulumi/pulumi-resource-pulumi-nodejs"
  export PATH="$bin_dir:$PATH"
  log "using the Pulumi CLI $(pulumi version) and Pulumi's Node.js language host v$nodejs_language_host_version from $bin_dir"
}

offline_pulumi_environment() {
  export PULUMI_SKIP_UPDATE_CHECK=true
  export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
}

ensure_node
ensure_pulumi
source "$repo_root/scripts/opa.sh" && ensure_opa
offline_pulumi_environment
