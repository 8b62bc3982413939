#!/usr/bin/env bash
# Puts Node.js >= 22.19, the Pulumi CLI with Pulumi's Node.js, YAML, Python and Go language hosts, OPA, and the SDK
# generator of the plugin for other languages on PATH, installing what is missing from the package registries only:
# Node from the npm registry; the rest built from the Go module proxy, side by side, each cached by version outside
# the repository. What is already on PATH is used as it is.
#
# Sourced by run-with-toolchain.sh and env.sh, which run in processes of their own. Do not source it in an
# interactive shell (it exits on failure): `eval "$(npm run -s env)"` puts the same tools on that shell's PATH.

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tool_cache=${PULUMI_TFE_GOVERNANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-tfe-governance}
node_major_wanted=24
# The last release whose sdk/v3 module still holds Pulumi's Node.js language host: later releases moved it into a
# module of its own, which the Go module proxy does not serve. docs/toolchain.md says what it lacks.
nodejs_language_host_version=3.68.0
opa_version_wanted=1.22.2
# The newest YAML language host the Go module proxy serves whole. It runs binary plugins (ours); source-based ones
# need v1.38 or newer.
yaml_language_host_version=1.25.0
# Python's host comes from the same sdk/v3 release as Node's; newer ones moved out of that module too.
python_language_host_version=3.68.0
# Go's host left sdk/v3 after v3.66.0 for a module the proxy does not serve; v3.66.0's builds and runs programs on the
# Go SDK of today with CLI 3.259.
go_language_host_version=3.66.0
# The newest pkg/v3 whose codegen still holds .NET's generator (it moved to a repository the proxy does not serve);
# its Python, Go and Node.js generators are the same release's.
sdkgen_pulumi_version=3.225.1
# apple-codesign's rcodesign, which signs the macOS plugins ad hoc on any OS; built without its notarization (AWS)
# parts, which an ad-hoc signature does not use.
rcodesign_version=0.29.0
# How often a build that is still running says so.
progress_every_seconds=15

log() { echo "[toolchain] $*" >&2; }
# What is used, said where a run's log should show it (the tests, the quickstart); TOOLCHAIN_QUIET leaves it out
# (`eval "$(npm run -s env)"`, which says nothing unless it builds).
note() { [ -n "${TOOLCHAIN_QUIET:-}" ] || log "$@"; }

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
  note "using Node $(node --version) from $dir"
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
#
# With MAIN_PACKAGE set to a folder of this repository, its Go files are the program built (our SDK generator); with
# EXTRA_REPLACES, more `old=new@version` replacements; with COPY_FROM_MODULE, a file of the first module copied
# beside the output (Python's host runs a script that ships beside it).
build_pulumi_program() {
  local version=$1 package=$2 output=$3 work go_mod
  shift 3
  local status=0
  work=$(mktemp -d)
  (
    set -e
    cd "$work"
    go mod init pulumi-tfe-governance-build
    for module in "$@"; do go mod edit -require="$module@v$version"; done
    go_mod=$(go mod download -json "$1@v$version" | node -e \
      'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).GoMod))')
    node "$repo_root/scripts/go-mod-replaces.mjs" "$go_mod" | while read -r replacement; do
      go mod edit -replace="$replacement"
    done
    for replacement in ${EXTRA_REPLACES:-}; do go mod edit -replace="$replacement"; done
    if [ -n "${MAIN_PACKAGE:-}" ]; then
      cp "$repo_root/$MAIN_PACKAGE"/*.go .
      package=.
    else
      printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$package" > tools.go
    fi
    GOFLAGS=-mod=mod go mod tidy
    go build -trimpath \
      -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$version" \
      -o "$output.partial" "$package"
    if [ -n "${COPY_FROM_MODULE:-}" ]; then
      local module_dir
      module_dir=$(go mod download -json "$1@v$version" | node -e \
        'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).Dir))')
      cp "$module_dir/$COPY_FROM_MODULE" "$(dirname "$output")/"
      chmod +x "$(dirname "$output")/$(basename "$COPY_FROM_MODULE")"
    fi
  ) || status=$?
  rm -rf "$work"
  [ $status -eq 0 ] && mv -f "$output.partial" "$output"
}

# The YAML host's go.mod has no replace directives: `go install module@version` builds exactly the release.
build_yaml_host() {
  local bin_dir=$1
  GOBIN="$bin_dir" go install -trimpath -ldflags "-s -w" \
    "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml@v$yaml_language_host_version"
}

# rcodesign from crates.io, into a folder of its own first: the cache holds it only once it is whole.
build_rcodesign() {
  local root=$1
  rm -rf "$root.partial"
  cargo install apple-codesign --version "$rcodesign_version" --no-default-features --locked --root "$root.partial" &&
    rm -rf "$root" && mv "$root.partial" "$root"
}

# OPA's go.mod has no replace directives, so `go install module@version` builds exactly the released module.
build_opa() {
  local bin_dir=$1
  GOBIN="$bin_dir" go install -trimpath -ldflags "-s -w" "github.com/open-policy-agent/opa@v$opa_version_wanted"
}

# Builds run in the background, each with its own log, while this shell reports progress: Go downloads while it
# compiles, and three builds at once finish sooner than one after another even on two cores.
build_names=()
build_pids=()
build_logs=()

start_build() {
  local name=$1 log_file
  shift
  if [ "${BUILT_WITH:-go}" = cargo ]; then
    command -v cargo >/dev/null || {
      log "$name is not on PATH and there is no Rust toolchain to build it: install Rust's cargo (or put $name on PATH)"
      exit 1
    }
  else
    command -v go >/dev/null || {
      log "$name is not on PATH and there is no Go toolchain to build it: install Go >= 1.25 (or put $name on PATH)"
      exit 1
    }
  fi
  mkdir -p "$tool_cache/logs"
  log_file="$tool_cache/logs/$(echo "$name" | tr -c 'A-Za-z0-9.\n' '-').log"
  log "building $name from the Go module proxy (first run only); its output goes to $log_file"
  # No cgo: Pulumi's and OPA's own releases are built without it, and it saves compiling C.
  CGO_ENABLED=0 "$@" >"$log_file" 2>&1 &
  build_names+=("$name")
  build_pids+=($!)
  build_logs+=("$log_file")
}

stop_builds() {
  local pid
  for pid in "${build_pids[@]}"; do kill "$pid" 2>/dev/null; done
}

wait_for_builds() {
  [ ${#build_pids[@]} -eq 0 ] && return
  trap 'stop_builds; exit 130' INT
  trap 'stop_builds; exit 143' TERM
  local started=$SECONDS next_report=$((SECONDS + progress_every_seconds)) i running failed=0
  local -a took=()
  while :; do
    running=()
    for i in "${!build_pids[@]}"; do
      [ -n "${took[$i]:-}" ] && continue
      if kill -0 "${build_pids[$i]}" 2>/dev/null; then
        running+=("${build_names[$i]}")
      elif wait "${build_pids[$i]}"; then
        took[$i]=$((SECONDS - started))
        log "built ${build_names[$i]} in ${took[$i]} s"
      else
        took[$i]=failed
        failed=1
        log "building ${build_names[$i]} failed; the last lines of its log, ${build_logs[$i]}:"
        tail -n 15 "${build_logs[$i]}" | sed 's/^/    /' >&2
      fi
    done
    [ ${#running[@]} -eq 0 ] && break
    if [ $SECONDS -ge $next_report ]; then
      log "still building after $((SECONDS - started)) s: $(printf '%s; ' "${running[@]}" | sed 's/; $//')"
      next_report=$((SECONDS + progress_every_seconds))
    fi
    sleep 1
  done
  trap - INT TERM
  [ $failed -eq 0 ] || exit 1
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

# TOOLCHAIN_TOOLS names the tools a command runs, of: opa yaml python go sdkgen rcodesign emulators chromium (the Pulumi CLI and Node.js host
# always): `npm run quickstart` builds only what it starts. Unset: every one, as the tests need.
wanted() {
  [ -z "${TOOLCHAIN_TOOLS:-}" ] || [[ " $TOOLCHAIN_TOOLS " == *" $1 "* ]]
}

ensure_pulumi_and_opa() {
  local pulumi_bin_dir="" language_host="" opa_bin_dir="" version yaml_host_dir="" python_host_dir="" go_host_dir=""
  local sdkgen host_dir rcodesign_dir=""
  if ! { command -v pulumi >/dev/null && command -v pulumi-language-nodejs >/dev/null; }; then
    version=$(pulumi_sdk_version)
    pulumi_bin_dir="$tool_cache/pulumi-v$version/bin"
    mkdir -p "$pulumi_bin_dir"
    [ -x "$pulumi_bin_dir/pulumi" ] || start_build "the Pulumi CLI v$version" build_pulumi_program "$version" \
      github.com/pulumi/pulumi/pkg/v3/cmd/pulumi "$pulumi_bin_dir/pulumi" \
      github.com/pulumi/pulumi/pkg/v3 github.com/pulumi/pulumi/sdk/v3
    language_host="$tool_cache/pulumi-language-nodejs-v$nodejs_language_host_version/pulumi-language-nodejs"
    mkdir -p "$(dirname "$language_host")"
    [ -x "$language_host" ] || start_build "Pulumi's Node.js language host v$nodejs_language_host_version" \
      build_pulumi_program "$nodejs_language_host_version" \
      github.com/pulumi/pulumi/sdk/v3/nodejs/cmd/pulumi-language-nodejs "$language_host" github.com/pulumi/pulumi/sdk/v3
  fi
  if wanted opa && ! command -v opa >/dev/null; then
    opa_bin_dir="$tool_cache/opa-v$opa_version_wanted/bin"
    mkdir -p "$opa_bin_dir"
    [ -x "$opa_bin_dir/opa" ] || start_build "OPA v$opa_version_wanted" build_opa "$opa_bin_dir"
  fi
  if wanted yaml && ! command -v pulumi-language-yaml >/dev/null; then
    yaml_host_dir="$tool_cache/pulumi-language-yaml-v$yaml_language_host_version"
    mkdir -p "$yaml_host_dir"
    [ -x "$yaml_host_dir/pulumi-language-yaml" ] ||
      start_build "Pulumi's YAML language host v$yaml_language_host_version" build_yaml_host "$yaml_host_dir"
  fi
  if wanted python && ! command -v pulumi-language-python >/dev/null; then
    python_host_dir="$tool_cache/pulumi-language-python-v$python_language_host_version"
    mkdir -p "$python_host_dir"
    # golang.org/x/text as that release was built with: a newer one no longer builds with it.
    [ -x "$python_host_dir/pulumi-language-python" ] ||
      EXTRA_REPLACES="golang.org/x/text=golang.org/x/text@v0.3.6" \
        COPY_FROM_MODULE=python/cmd/pulumi-language-python-exec \
        start_build "Pulumi's Python language host v$python_language_host_version" \
        build_pulumi_program "$python_language_host_version" \
        github.com/pulumi/pulumi/sdk/v3/python/cmd/pulumi-language-python \
        "$python_host_dir/pulumi-language-python" github.com/pulumi/pulumi/sdk/v3
  fi
  if wanted go && ! command -v pulumi-language-go >/dev/null; then
    go_host_dir="$tool_cache/pulumi-language-go-v$go_language_host_version"
    mkdir -p "$go_host_dir"
    [ -x "$go_host_dir/pulumi-language-go" ] ||
      EXTRA_REPLACES="golang.org/x/text=golang.org/x/text@v0.3.6" \
        start_build "Pulumi's Go language host v$go_language_host_version" \
        build_pulumi_program "$go_language_host_version" \
        github.com/pulumi/pulumi/sdk/v3/go/pulumi-language-go \
        "$go_host_dir/pulumi-language-go" github.com/pulumi/pulumi/sdk/v3
  fi
  # The plugin's SDK generator `tfegov-sdkgen`: Pulumi's own code generators (pkg/v3/codegen) driven by tools/sdkgen.
  # Cached by the version and the generator's source.
  if wanted sdkgen; then
    sdkgen="$tool_cache/tfegov-sdkgen-v$sdkgen_pulumi_version-$(cat "$repo_root"/tools/sdkgen/*.go | cksum | cut -d' ' -f1)/tfegov-sdkgen"
    mkdir -p "$(dirname "$sdkgen")"
    [ -x "$sdkgen" ] || MAIN_PACKAGE=tools/sdkgen start_build "the SDK generator (Pulumi's codegen v$sdkgen_pulumi_version)" \
      build_pulumi_program "$sdkgen_pulumi_version" unused "$sdkgen" github.com/pulumi/pulumi/pkg/v3 github.com/pulumi/pulumi/sdk/v3
    export PATH="$(dirname "$sdkgen"):$PATH"
  fi
  if wanted rcodesign && ! command -v rcodesign >/dev/null; then
    rcodesign_dir="$tool_cache/rcodesign-v$rcodesign_version"
    [ -x "$rcodesign_dir/bin/rcodesign" ] || BUILT_WITH=cargo \
      start_build "rcodesign v$rcodesign_version (apple-codesign, from crates.io)" build_rcodesign "$rcodesign_dir"
    export PATH="$rcodesign_dir/bin:$PATH"
  fi
  wait_for_builds
  # The directory of the toolchain's own CLI, where it is the one used (built now, or on PATH from an earlier run):
  # language hosts go beside it, as in Pulumi's own distribution. The CLI then finds each beside itself, and on PATH
  # at the same place, so it does not warn "using pulumi-language-<x> from $PATH" at every command.
  local cli_dir=$pulumi_bin_dir found_cli
  if [ -z "$cli_dir" ]; then
    found_cli=$(command -v pulumi || true)
    case "$found_cli" in "$tool_cache"/*) cli_dir=$(dirname "$found_cli") ;; esac
  fi
  if [ -n "$pulumi_bin_dir" ]; then
    # Laid out as Pulumi's own distribution: the CLI loads the language host and the dynamic provider (which ships
    # in @pulumi/pulumi) from beside itself.
    place_beside "$pulumi_bin_dir" "$language_host"
    place_beside "$pulumi_bin_dir" "$repo_root/node_modules/@pulumi/pulumi/pulumi-resource-pulumi-nodejs"
    export PATH="$pulumi_bin_dir:$PATH"
    note "using the Pulumi CLI $(pulumi version) and Pulumi's Node.js language host v$nodejs_language_host_version from $pulumi_bin_dir"
  fi
  [ -n "$rcodesign_dir" ] && log "using $(rcodesign --version 2>/dev/null | head -n 1) from $rcodesign_dir/bin"
  if [ -n "$opa_bin_dir" ]; then
    export PATH="$opa_bin_dir:$PATH"
    note "using OPA $(opa version | sed -n 's/^Version: //p') from $opa_bin_dir"
  fi
  local hosts=()
  [ -n "$yaml_host_dir" ] && hosts+=("YAML v$yaml_language_host_version") && use_language_host "$yaml_host_dir" "$cli_dir"
  [ -n "$python_host_dir" ] && hosts+=("Python v$python_language_host_version") && use_language_host "$python_host_dir" "$cli_dir"
  [ -n "$go_host_dir" ] && hosts+=("Go v$go_language_host_version") && use_language_host "$go_host_dir" "$cli_dir"
  [ ${#hosts[@]} -gt 0 ] && note "using Pulumi's language hosts for $(IFS=,; echo "${hosts[*]}" | sed 's/,/, /g')"
  return 0
}

# A language host built here (with what runs beside it: Python's exec script): beside the toolchain's CLI where there
# is one, else on PATH (a Pulumi of the machine's own, which then says it uses the host from $PATH).
use_language_host() {
  local dir=$1 cli_dir=$2 file
  if [ -z "$cli_dir" ]; then
    export PATH="$dir:$PATH"
    return
  fi
  for file in "$dir"/pulumi-language-*; do place_beside "$cli_dir" "$file"; done
}

# Chromium, for the test that opens `tfe-governance impact --html`'s page in a real headless browser: the one on PATH
# (or TFEGOV_CHROMIUM), else Debian's package, installed with apt where this runs as root. Elsewhere the test says
# what to install.
ensure_chromium() {
  wanted chromium || return 0
  local found=${TFEGOV_CHROMIUM:-}
  [ -n "$found" ] || found=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
  if [ -z "$found" ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    mkdir -p "$tool_cache/logs"
    log "installing Debian's chromium for the browser test (first run only); its output goes to $tool_cache/logs/chromium.log"
    {
      apt-get install -y --no-install-recommends chromium ||
        { apt-get update && apt-get install -y --no-install-recommends chromium; }
    } >"$tool_cache/logs/chromium.log" 2>&1 || {
      log "installing chromium failed; the last lines of its log:"
      tail -n 15 "$tool_cache/logs/chromium.log" | sed 's/^/    /' >&2
      exit 1
    }
    found=$(command -v chromium)
  fi
  if [ -z "$found" ]; then
    log "no Chromium found: the browser test will fail until one is installed or TFEGOV_CHROMIUM names it"
    return 0
  fi
  export TFEGOV_CHROMIUM=$found
  note "using $("$found" --version 2>/dev/null | head -n 1) from $found"
}

# What the tests of the other platforms' plugins run them with, from Debian's packages (installed with apt where this
# runs as root): qemu-user-static with an arm64 loader and libc (the cross packages) for linux-arm64, and
# osslsigncode, which reads the Windows executable's Authenticode signature and signs it as a team would. Windows'
# executable is not run: Debian 12's wine (8.0) cannot start Node 24 (docs/other-languages.md).
arm64_root=/usr/aarch64-linux-gnu
ensure_emulators() {
  wanted emulators || return 0
  local missing=()
  command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
  [ -e "$arm64_root/lib/ld-linux-aarch64.so.1" ] || missing+=(libc6-arm64-cross)
  [ -e "$arm64_root/lib/libstdc++.so.6" ] || missing+=(libstdc++6-arm64-cross)
  [ -e "$arm64_root/lib/libgcc_s.so.1" ] || missing+=(libgcc-s1-arm64-cross)
  command -v osslsigncode >/dev/null || missing+=(osslsigncode)
  if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    mkdir -p "$tool_cache/logs"
    log "installing Debian's ${missing[*]} for the tests of the other platforms' plugins (first run only); its output goes to $tool_cache/logs/emulators.log"
    {
      apt-get install -y --no-install-recommends "${missing[@]}" ||
        { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; }
    } >"$tool_cache/logs/emulators.log" 2>&1 || {
      log "installing ${missing[*]} failed; the last lines of its log:"
      tail -n 15 "$tool_cache/logs/emulators.log" | sed 's/^/    /' >&2
      exit 1
    }
  elif [ ${#missing[@]} -gt 0 ]; then
    log "missing ${missing[*]} (Debian's names): the tests of the linux-arm64 and windows-amd64 plugins will fail until they are installed"
    return 0
  fi
  export TFEGOV_ARM64_ROOT=$arm64_root
}

offline_pulumi_environment() {
  export PULUMI_SKIP_UPDATE_CHECK=true
  export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
}

ensure_node
ensure_pulumi_and_opa
ensure_chromium
ensure_emulators
offline_pulumi_environment
