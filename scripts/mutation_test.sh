#!/usr/bin/env bash
# mutation_test.sh [--build DIR] [--sample N] [--only ID] [--check]: applies each mutant of
# tests/mutation/mutants.tsv (a small change to a WGSL kernel or an op registration) in turn,
# rebuilds the test binary incrementally (a WGSL change recompiles only the embedded-shader object,
# then relinks), runs that op family's tests (the mutant's gtest filter) and restores the file.
# A mutant is killed when the tests fail (or time out); one that does not compile is reported as
# invalid and not counted. Prints "mutants: K killed of M" and the survivors; exit 1 when any survive.
# --sample N runs every (M/N)-th mutant (deterministic; CI runs a sample). Equivalent mutants (6th
# field) are listed and not run. The score of the full run is recorded in docs/TESTING.md.
# --check only verifies that every mutant (equivalent ones too) still applies: its text occurs
# exactly once in its file (no build; a ctest runs it, so an edit that strands a mutant fails early).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build sample=0 only="" check=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --sample) sample=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --check) check=1; shift ;;
    *) echo "usage: mutation_test.sh [--build DIR] [--sample N] [--only ID] [--check]"; exit 2 ;;
  esac
done
list=tests/mutation/mutants.tsv
if [ "$check" = 1 ]; then
  exec python3 - "$list" <<'PY'
import sys
bad = 0
for n, line in enumerate(open(sys.argv[1]), 1):
    if line.startswith("#") or not line.strip():
        continue
    f = line.rstrip("\n").split("\t")
    if len(f) < 5:
        print(f"line {n}: {len(f)} fields, want ID FILE OLD NEW FILTER [EQUIVALENT-REASON]"); bad += 1; continue
    try:
        c = open(f[1]).read().count(f[2].replace("\\n", "\n"))
    except OSError as e:
        print(f"{f[0]}: {e}"); bad += 1; continue
    if c != 1:
        print(f"{f[0]}: text occurs {c} times in {f[1]} (must be exactly once)"); bad += 1
print(f"mutants that no longer apply: {bad}")
sys.exit(1 if bad else 0)
PY
fi
export ETWEBGPU_REQUIRE_GPU=1  # a skipped test must not let a mutant survive
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
jobs=$(nproc 2>/dev/null || echo 2)
mapfile -t lines < <(grep -v '^#' "$list" | grep -v '^$')
runnable=() equivalent=()
for l in "${lines[@]}"; do
  IFS=$'\t' read -r id file old new filter why <<<"$l"
  if [ -n "${why:-}" ]; then equivalent+=("$id: $why"); else runnable+=("$l"); fi
done
total=${#runnable[@]}
stride=1
if [ "$sample" -gt 0 ] && [ "$sample" -lt "$total" ]; then stride=$(( total / sample )); fi

restore=""
cleanup() { if [ -n "$restore" ]; then mv -f "$restore.orig" "$restore"; fi; }
trap cleanup EXIT

build_tests() { cmake --build "$build" -j"$jobs" --target etwebgpu_tests >"$1" 2>&1; }
echo "== mutation test: baseline build"
build_tests /tmp/etw-mutation-build.log || { cat /tmp/etw-mutation-build.log; exit 2; }
killed=0 run=0 invalid=0 survivors=()
t0=$(date +%s)
for ((i = 0; i < total; i += stride)); do
  IFS=$'\t' read -r id file old new filter why <<<"${runnable[$i]}"
  [ -n "$only" ] && [ "$id" != "$only" ] && continue
  cp -p "$file" "$file.orig"
  restore=$file
  if ! OLD="$old" NEW="$new" python3 - "$file" <<'PY'
import os, sys
p = sys.argv[1]
old = os.environ["OLD"].replace("\\n", "\n")
new = os.environ["NEW"].replace("\\n", "\n")
s = open(p).read()
if s.count(old) != 1:
    sys.exit(f"mutant text occurs {s.count(old)} times in {p}: update tests/mutation/mutants.tsv")
open(p, "w").write(s.replace(old, new))
PY
  then mv -f "$file.orig" "$file"; restore=""; exit 2; fi
  # Keep the original timestamp off the mutated file so ninja sees the change both ways.
  touch "$file"
  start=$(date +%s)
  if ! build_tests /tmp/etw-mutation-build.log; then
    verdict=invalid; invalid=$((invalid + 1))
  else
    run=$((run + 1))
    if timeout 600 "$build/tests/etwebgpu_tests" --gtest_filter="$filter" --gtest_brief=1 >/tmp/etw-mutation-test.log 2>&1; then
      verdict=SURVIVED; survivors+=("$id ($file)")
    else
      verdict=killed; killed=$((killed + 1))
    fi
  fi
  mv -f "$file.orig" "$file"
  touch "$file"
  restore=""
  printf '%-24s %-9s %4ss  %s\n' "$id" "$verdict" $(( $(date +%s) - start )) "$file"
done
echo "== restoring the build"
build_tests /tmp/etw-mutation-build.log || { cat /tmp/etw-mutation-build.log; exit 2; }
echo "mutants: $killed killed of $run ($invalid invalid, ${#equivalent[@]} equivalent not run) in $(( $(date +%s) - t0 )) s"
for e in "${equivalent[@]}"; do echo "  $e"; done
if [ ${#survivors[@]} -gt 0 ]; then
  echo "survivors:"
  for s in "${survivors[@]}"; do echo "  $s"; done
  exit 1
fi
