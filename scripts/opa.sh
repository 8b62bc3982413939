#!/usr/bin/env bash
# Puts an `opa` binary on PATH, which PolicyFolder runs at preview to check Rego syntax and queries. One on PATH
# already is used as it is; otherwise OPA is built from the Go module proxy at a pinned version and cached by
# version, like the Pulumi CLI in toolchain.sh (which sources this file and calls ensure_opa).

opa_version_wanted=1.22.2

ensure_opa() {
  if command -v opa >/dev/null; then return; fi
  local cache=${PULUMI_TFE_GOVERNANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-tfe-governance}
  local bin_dir="$cache/opa-v$opa_version_wanted/bin"
  if [ ! -x "$bin_dir/opa" ]; then
    command -v go >/dev/null || {
      echo "[opa] no 'opa' on PATH and no Go toolchain to build it: install OPA $opa_version_wanted, or Go" >&2
      return 1
    }
    echo "[opa] building OPA v$opa_version_wanted from the Go module proxy (first run only; takes a few minutes)" >&2
    mkdir -p "$bin_dir"
    # OPA's go.mod has no replace directives, so `go install module@version` builds exactly the released module.
    # Without cgo: the optional Wasm engine is the only part that needs it, and the checks never use it.
    CGO_ENABLED=0 GOBIN="$bin_dir" go install -trimpath -ldflags "-s -w" \
      "github.com/open-policy-agent/opa@v$opa_version_wanted" >&2 || {
      rm -rf "$bin_dir"
      return 1
    }
  fi
  export PATH="$bin_dir:$PATH"
  echo "[opa] using OPA $(opa version | sed -n 's/^Version: //p') from $bin_dir" >&2
}
