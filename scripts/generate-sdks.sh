#!/usr/bin/env bash
# Writes the SDKs of the plugin `pulumi-resource-tfegov` under sdk/ (python, go, dotnet, nodejs) from
# src/plugin/schema.json, with Pulumi's own code generators (tools/sdkgen, built by the toolchain as tfegov-sdkgen).
# Nothing under sdk/ is written by hand.
#   npm run generate:sdks                         regenerate sdk/
#   npm run generate:sdks -- --check              fail when sdk/ differs from what the schema gives (CI runs this)
#   generate-sdks.sh --schema <file> --into <dir> the SDKs of another schema (a release's, with its download URL)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
schema=src/plugin/schema.json
into=""
check=false
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=true ;;
    --schema) schema=$2; shift ;;
    --into) into=$2; shift ;;
    *) echo "generate-sdks.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
tfegov-sdkgen "$schema" "$out" >/dev/null
# The Go SDK is a module of its own, on the Go SDK of the release whose generators wrote it.
pulumi_go_sdk=$(go version -m "$(command -v tfegov-sdkgen)" | awk '$2 == "github.com/pulumi/pulumi/sdk/v3" { print $3; exit }')
printf 'module github.com/pulumi-tfe-governance/pulumi-tfe-governance/sdk/go\n\ngo 1.23\n\nrequire github.com/pulumi/pulumi/sdk/v3 %s\n' \
  "$pulumi_go_sdk" >"$out/go/go.mod"
(cd "$out/go" && GOFLAGS=-mod=mod go mod tidy 2>/dev/null)
if [ -n "$into" ]; then
  rm -rf "$into"
  cp -r "$out" "$into"
elif [ "$check" = true ]; then
  if ! diff -r sdk "$out" >/dev/null; then
    diff -r sdk "$out" | head -40 >&2
    echo "sdk/ differs from what src/plugin/schema.json gives: run npm run generate:sdks" >&2
    exit 1
  fi
  echo "sdk/ is current"
else
  rm -rf sdk
  cp -r "$out" sdk
  echo "wrote sdk/: $(find sdk -type f | wc -l) files"
fi
