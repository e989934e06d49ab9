#!/usr/bin/env bash
# fuzz.sh [SECONDS]: builds the libFuzzer loader target with clang (ASan + UBSan), seeds a corpus
# from builder-made files and the conformance fixtures, replays fuzz/regressions/, then fuzzes
# with a fixed seed for SECONDS (default 60). A crash leaves its input in build-fuzz/crashes/:
# copy it to fuzz/regressions/ (it is replayed by every later run).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DETWEBGPU_BUILD_TESTS=OFF -DETWEBGPU_BUILD_BENCH=OFF -DETWEBGPU_BUILD_FUZZ=ON \
  "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target pte_loader_fuzz etwebgpu_cli
corpus=build-fuzz/corpus; mkdir -p "$corpus" build-fuzz/crashes
./build-fuzz/etwebgpu example --write build-fuzz/example >/dev/null
cp build-fuzz/example/model.pte "$corpus/example.pte"
conf=${ETWEBGPU_CONFORMANCE_DIR:-../shared/conformance}
if [ -d "$conf" ]; then
  for d in "$conf"/*/; do [ -f "$d/model.pte" ] && cp "$d/model.pte" "$corpus/$(basename "$d").pte"; done
fi
export ASAN_OPTIONS=detect_leaks=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp:print_suppressions=0
regs=(fuzz/regressions/*)
if [ -e "${regs[0]}" ]; then ./build-fuzz/fuzz/pte_loader_fuzz "${regs[@]}"; fi
./build-fuzz/fuzz/pte_loader_fuzz "$corpus" -seed=1 -max_total_time="$secs" -max_len=262144 -rss_limit_mb=2048 \
  -artifact_prefix=build-fuzz/crashes/ -print_final_stats=1 2>&1 | tail -15
