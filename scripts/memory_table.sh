#!/usr/bin/env bash
# memory_table.sh [BUILD_DIR] [CONFORMANCE_DIR] [MIN_OPS]: prints the markdown table of
# docs/PERFORMANCE.md's "Planned memory" section: for every conformance fixture of more than
# MIN_OPS (default 5) ops, device bytes and dispatches per run without memory planning
# (`bench --no-plan-memory`) and with it. Byte counts do not depend on the GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
dir=${2:-${ETWEBGPU_CONFORMANCE_DIR:-../shared/conformance}}
min=${3:-5}
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
echo "| fixture | ops | gpu_bytes unplanned | planned | ratio | dispatches unplanned | planned |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for m in "$dir"/*/model.pte; do
  name=$(basename "$(dirname "$m")")
  ops=$("$build/etwebgpu" inspect "$m" | sed -n 's/.*one GPU graph of \([0-9]*\) ops.*/\1/p')
  [ -n "$ops" ] && [ "$ops" -gt "$min" ] || continue
  before=$("$build/etwebgpu" bench --json --warmup 0 --iters 1 --no-plan-memory "$m" | tail -1)
  after=$("$build/etwebgpu" bench --json --warmup 0 --iters 1 "$m" | tail -1)
  b=$(field gpu_bytes <<<"$before") a=$(field gpu_bytes <<<"$after")
  db=$(field dispatches <<<"$before") da=$(field dispatches <<<"$after")
  printf '| %s | %s | %s | %s | %.2f | %s | %s |\n' "$name" "$ops" "$b" "$a" "$(python3 -c "print($a / $b)")" "$db" "$da"
done
