#!/usr/bin/env bash
# coverage_check.sh LOG_DIR [BUILD_DIR] [--write]: after the op tests ran with
# ETWEBGPU_COVERAGE_DIR=LOG_DIR (tests/support/op_harness.h), fails when
#   - a registered operator (`etwebgpu ops`) was run by no op test, or
#   - a kernel route of tests/coverage/kernel_routes.txt ("OP VARIANT": an operator and the kernel
#     variant its dispatch is labelled with) was dispatched by no op test, or
#   - an op test dispatched a route that file does not list (a new route: add it, with its tests).
# --write rewrites kernel_routes.txt from the log (after adding routes and their tests; review the diff).
set -euo pipefail
cd "$(dirname "$0")/.."
log_dir=${1:?usage: coverage_check.sh LOG_DIR [BUILD_DIR] [--write]}
build=${2:-build}
routes_file=tests/coverage/kernel_routes.txt
shopt -s nullglob
logs=("$log_dir"/ops-*.log)
if [ ${#logs[@]} -eq 0 ]; then
  echo "coverage: no logs in $log_dir (run the tests with ETWEBGPU_COVERAGE_DIR=$log_dir)"
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/etwebgpu" ops | awk '{print $1}' | sort -u >"$tmp/registered"
cat "${logs[@]}" | awk '$1 == "op" {print $2}' | sort -u >"$tmp/ran"
cat "${logs[@]}" | awk '$1 == "route" {print $2, $3}' | sort -u >"$tmp/routes_ran"
if [ "${3:-}" = --write ]; then
  { sed -n '/^#/p' "$routes_file"; cat "$tmp/routes_ran"; } >"$tmp/new"
  mv "$tmp/new" "$routes_file"
  echo "coverage: wrote $(wc -l <"$tmp/routes_ran") routes to $routes_file"
  exit 0
fi
sed 's/#.*//' "$routes_file" | awk 'NF == 2 {print $1, $2}' | sort -u >"$tmp/routes_known"
rc=0
report() {  # report FILE MESSAGE
  if [ -s "$1" ]; then
    echo "coverage: $2:"
    sed 's/^/  /' "$1"
    rc=1
  fi
}
comm -23 "$tmp/registered" "$tmp/ran" >"$tmp/untested_ops"
comm -23 "$tmp/routes_known" "$tmp/routes_ran" >"$tmp/untested_routes"
comm -13 "$tmp/routes_known" "$tmp/routes_ran" >"$tmp/unknown_routes"
report "$tmp/untested_ops" "registered operators no op test runs"
report "$tmp/untested_routes" "kernel routes ($routes_file) no op test dispatches"
report "$tmp/unknown_routes" "routes op tests dispatch that $routes_file does not list (add them)"
echo "coverage: $(wc -l <"$tmp/ran") of $(wc -l <"$tmp/registered") registered operators run by op tests," \
     "$(comm -12 "$tmp/routes_known" "$tmp/routes_ran" | wc -l) of $(wc -l <"$tmp/routes_known") kernel routes dispatched"
exit $rc
