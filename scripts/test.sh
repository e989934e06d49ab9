#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite: unit, op, conformance and
# error-path tests; the Python package and its pytest tests (tests/python); then the same suite
# under ASan + UBSan; then the thread, device-loss and index-error tests under ThreadSanitizer; then
# a short deterministic fuzz run of each target.
# Last, the WebAssembly build and its browser tests in headless Chromium (scripts/web_build.sh,
# tests/web/run_web_tests.mjs).
# Nothing passes by skipping: GPU tests fail without an adapter, fixture tests fail without the
# fixtures, conformance cases must match tests/conformance/expected_status.txt (native and browser).
# After the tests: every registered operator and kernel route must have run in an op test
# (scripts/coverage_check.sh), docs/OPS.md's operator table must match the registry, and a sample
# of mutants (scripts/mutation_test.sh) must be killed.
# ETWEBGPU_SKIP_SANITIZE=1 / ETWEBGPU_SKIP_TSAN=1 / ETWEBGPU_SKIP_FUZZ=1 / ETWEBGPU_SKIP_PYTHON=1 /
# ETWEBGPU_SKIP_WEB=1 / ETWEBGPU_SKIP_MUTATION=1 skip those stages (local iteration only).
set -euo pipefail
cd "$(dirname "$0")/.."
start_s=$(date +%s)
stage() { echo "== [$(( $(date +%s) - start_s )) s] $*"; }
bash scripts/setup.sh --test
jobs=$(nproc 2>/dev/null || echo 2)
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
# Sanitizer builds at -O1 with line tables only: stack traces keep file and line, and a test file
# compiles in less than half the time of -O2 -g (27 -> 12 s for one under ASan + UBSan).
sanitizer_flags="-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
export ETWEBGPU_REQUIRE_GPU=1 ETWEBGPU_REQUIRE_FIXTURES=1
# The suite's compiled pipelines go beside its build, not into the user's ~/.cache/etwebgpu; its
# parallel test processes share the directory (entries are written whole and checked on read).
export ETWEBGPU_CACHE_DIR=${ETWEBGPU_CACHE_DIR:-$PWD/build/pipeline-cache}
fixtures=${ETWEBGPU_CONFORMANCE_DIR:-../shared/conformance}
if [ ! -f "$fixtures/manifest.json" ]; then
  echo "conformance fixtures missing at $fixtures (clone ../shared beside the repo or set ETWEBGPU_CONFORMANCE_DIR)"
  exit 1
fi

stage "build + tests"
# Tests and benchmarks on (a build folder the demo configured has them off).
bash scripts/build.sh build -DETWEBGPU_BUILD_TESTS=ON -DETWEBGPU_BUILD_BENCH=ON
coverage_log=$(mktemp -d)
(cd build && ETWEBGPU_COVERAGE_DIR=$coverage_log ctest -j"$jobs" --output-on-failure --timeout 900)
bash scripts/coverage_check.sh "$coverage_log" build
rm -rf "$coverage_log"
bash scripts/ops_table.sh build --check
./build/etwebgpu conformance
if [ "${ETWEBGPU_SKIP_MUTATION:-0}" != 1 ]; then
  stage "mutation sample"
  bash scripts/mutation_test.sh --build build --sample "${ETWEBGPU_MUTATION_SAMPLE:-4}"
fi

if [ "${ETWEBGPU_SKIP_PYTHON:-0}" != 1 ]; then
  stage "Python package (over build/'s library) + tests"
  bash scripts/setup.sh --python
  bash scripts/build_python.sh --lib-from build
  PYTHONPATH=build-python ETWEBGPU_LIB_BUILD_DIR=$PWD/build /usr/bin/python3 -m pytest -q -rs tests/python
fi

if [ "${ETWEBGPU_SKIP_SANITIZE:-0}" != 1 ]; then
  stage "ASan + UBSan build + tests"
  bash scripts/build.sh build-asan -DETWEBGPU_SANITIZE=ON -DETWEBGPU_BUILD_BENCH=OFF "$sanitizer_flags"
  # Dawn and the Vulkan driver are not instrumented; leaks inside them are not ours.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp:print_suppressions=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # One process per shard, not per test: under ASan each of the ~850 processes spent about a
  # second starting Dawn and a device (700 s through ctest).
  # Left out here: tests whose time is fp64 references over tensors past 65,535 workgroups, the
  # 1,000-call generate soak and the sampler's exhaustive rows (a third of the suite's time). Their
  # host paths (grid folding, generate, the sampler's plans) run under ASan in smaller tests.
  asan_filter='-Op*65535*:Soak.*:TokenSampler.TopPTemperatureAndLargeTopKRunOverTheBlocksMassesOnEveryRow'
  shard_logs=$(mktemp -d)
  pids=()
  for ((i = 0; i < jobs; ++i)); do
    GTEST_TOTAL_SHARDS=$jobs GTEST_SHARD_INDEX=$i timeout 1800 ./build-asan/tests/etwebgpu_tests \
      --gtest_filter="$asan_filter" > "$shard_logs/$i.log" 2>&1 &
    pids+=($!)
  done
  failed=0
  for ((i = 0; i < jobs; ++i)); do
    if ! wait "${pids[$i]}"; then
      failed=1
      echo "ASan shard $i of $jobs failed:"
      grep -E '^\[  FAILED  \]|ERROR: (Address|Leak)Sanitizer|runtime error' "$shard_logs/$i.log" | head -40
      tail -n 40 "$shard_logs/$i.log"
    else
      grep -E '^\[  PASSED  \]' "$shard_logs/$i.log" | sed "s/^/ASan shard $i: /"
    fi
  done
  rm -rf "$shard_logs"
  [ "$failed" = 0 ]
fi

if [ "${ETWEBGPU_SKIP_TSAN:-0}" != 1 ]; then
  stage "ThreadSanitizer build + thread tests"
  bash scripts/build.sh build-tsan -DCMAKE_CXX_COMPILER=clang++ -DETWEBGPU_TSAN=ON -DETWEBGPU_BUILD_BENCH=OFF \
    "$sanitizer_flags"
  # Dawn, the Vulkan loader and Mesa are not instrumented: scripts/tsan.supp says what is suppressed.
  TSAN_OPTIONS="suppressions=$PWD/scripts/tsan.supp halt_on_error=1 second_deadlock_stack=1" \
    ./build-tsan/tests/etwebgpu_tests \
    --gtest_filter='Threads.*:DeviceLoss.*:IndexErrors.*:Robustness.SeveralModels*:Robustness.ConcurrentRuns*'
fi

if [ "${ETWEBGPU_SKIP_FUZZ:-0}" != 1 ]; then
  stage "fuzz (.pte loader, VkGraph reader, .npy reader: ${ETWEBGPU_FUZZ_SECONDS:-60} s each)"
  bash scripts/fuzz.sh "${ETWEBGPU_FUZZ_SECONDS:-60}"
fi
if [ "${ETWEBGPU_SKIP_WEB:-0}" != 1 ]; then
  stage "web build + browser tests"
  bash scripts/setup.sh --web
  bash scripts/web_build.sh build-web
  node tests/web/run_web_tests.mjs --build build-web --require-fixtures
fi
stage "all tests passed"
