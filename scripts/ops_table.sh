#!/usr/bin/env bash
# ops_table.sh [BUILD_DIR] [--check]: writes the operator table of docs/OPS.md (between its
# "BEGIN/END GENERATED operator table" markers) from the registry (`etwebgpu ops --markdown`).
# --check changes nothing and fails when the committed table differs (CI, scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
doc=docs/OPS.md
begin='<!-- BEGIN GENERATED operator table: bash scripts/ops_table.sh -->'
end='<!-- END GENERATED operator table -->'
grep -qxF "$begin" "$doc" && grep -qxF "$end" "$doc" || { echo "ops_table: markers missing in $doc"; exit 1; }
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.table"' EXIT
"$build/etwebgpu" ops --markdown >"$tmp.table"
awk -v b="$begin" -v e="$end" -v t="$tmp.table" '
  $0 == b { print; while ((getline l < t) > 0) print l; skip = 1; next }
  $0 == e { skip = 0 }
  !skip { print }' "$doc" >"$tmp"
if [ "${2:-}" = --check ]; then
  if ! diff -u "$doc" "$tmp"; then
    echo "ops_table: $doc's operator table is out of date: run bash scripts/ops_table.sh $build and commit"
    exit 1
  fi
  echo "ops_table: $doc matches the registry"
else
  cp "$tmp" "$doc"
  echo "ops_table: wrote $doc"
fi
