#!/usr/bin/env bash
# fuzz.sh [SECONDS]: builds the libFuzzer targets with clang (ASan + UBSan) -- pte_loader (.pte +
# VkGraph + program merge), vkgraph_reader (a delegate blob alone), npy_reader -- seeds their
# corpora at run time from builder-made files and ../shared/conformance (blobs extracted by
# fuzz_seeds), replays fuzz/regressions/<target>/, then fuzzes each target with a fixed seed for
# SECONDS (default 60). A crash leaves its input in build-fuzz/crashes/<target>/: copy it to
# fuzz/regressions/<target>/ (replayed by every later run).
# ETWEBGPU_FUZZ_PREPARE_ONLY=1 builds, seeds and replays without fuzzing (for a long campaign run
# by hand, see docs/SECURITY.md).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
targets=(pte_loader vkgraph_reader npy_reader)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DETWEBGPU_BUILD_TESTS=OFF -DETWEBGPU_BUILD_BENCH=OFF -DETWEBGPU_BUILD_FUZZ=ON \
  "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target etwebgpu_cli fuzz_seeds "${targets[@]/%/_fuzz}"
export ASAN_OPTIONS=detect_leaks=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp:print_suppressions=0
conf=${ETWEBGPU_CONFORMANCE_DIR:-../shared/conformance}
corpus=build-fuzz/corpus
rm -rf "$corpus"; mkdir -p "${targets[@]/#/$corpus/}"
./build-fuzz/etwebgpu example --write build-fuzz/example >/dev/null
ptes=(build-fuzz/example/model.pte)
if [ -d "$conf" ]; then
  for d in "$conf"/*/; do [ -f "$d/model.pte" ] && ptes+=("$d/model.pte"); done
  # Fixture .npy files up to 64 KiB (the npy target's -max_len), besides the generated ones.
  find "$conf" -name '*.npy' -size -64k | while read -r f; do
    cp "$f" "$corpus/npy_reader/$(basename "$(dirname "$f")")_$(basename "$f")"
  done
fi
for p in "${ptes[@]}"; do cp "$p" "$corpus/pte_loader/$(basename "$(dirname "$p")").pte"; done
./build-fuzz/fuzz/fuzz_seeds vkgraph "$corpus/vkgraph_reader" "${ptes[@]}"
./build-fuzz/fuzz/fuzz_seeds npy "$corpus/npy_reader"
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/crashes/$t"
  regs=(fuzz/regressions/"$t"/*)
  if [ -e "${regs[0]}" ]; then ./build-fuzz/fuzz/"$t"_fuzz "${regs[@]}"; fi
done
[ "${ETWEBGPU_FUZZ_PREPARE_ONLY:-0}" = 1 ] && exit 0
for t in "${targets[@]}"; do
  max_len=262144; [ "$t" = npy_reader ] && max_len=65536
  echo "== fuzz $t ($secs s)"
  ./build-fuzz/fuzz/"$t"_fuzz "$corpus/$t" -seed=1 -max_total_time="$secs" -max_len=$max_len -rss_limit_mb=2048 \
    -artifact_prefix="build-fuzz/crashes/$t/" -print_final_stats=1 2>&1 | tail -15
done
