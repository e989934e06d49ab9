#!/usr/bin/env bash
# One command on the GPU machine (the device tool; carry devbin/, .gl/, .devshare/ as for
# h200_session.sh; devbin/ built from this tree): exports every spec of bench/models/ with the
# shared exporter (all at once), then times each model with etwebgpu, the upstream runner, PyTorch
# eager and a PyTorch CUDA graph (bench/compare_models.py), then the public fixtures with etwebgpu
# and the upstream runner only. Ends within 540 s; results in $OUT/compare.tgz, summaries on stdout.
set -uo pipefail
START=$(date +%s)
DEADLINE=$((START + ${BUDGET_S:-530}))
say() { echo "[$(($(date +%s) - START)) s] $*"; }
left() { echo $((DEADLINE - $(date +%s))); }

for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp LD_LIBRARY_PATH=$PWD/devbin
R=$OUT/compare W=/tmp/models
rm -rf $W; mkdir -p $R/export $W
./devbin/etwebgpu info > $R/info.txt 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >> $R/info.txt 2>&1 || true
say "$(head -1 $R/info.txt)"

# Exporting is CPU work (float32 and float64 eager references, lowering, serialising): one process
# per model, two threads each, on the 16 cores. Each writes its own tree, so no two share a manifest.
specs=$(ls bench/models/[a-z]*.py | grep -v /q8_)  # the int8 models: bench/quant_bench_session.sh (--no-ref64)
for s in $specs; do
  n=$(basename $s .py)
  ( OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 timeout 240 python3 .devshare/exporter/export_pte.py $s $W/$n --atol rel \
      > $R/export/$n.log 2>&1
    rc=$?; say "exported $n: rc=$rc, $(tail -1 $R/export/$n.log | cut -c1-150)" ) &
done
wait
for d in $W/*/; do [ -f $d/manifest.json ] && cp $d/manifest.json $R/export/$(basename $d).manifest.json; done
roots=$(for d in $W/*/; do [ -f $d/manifest.json ] && echo $d; done)
say "exports done: $(echo $roots | wc -w) of $(echo $specs | wc -w)"

# Models first (all four runtimes); whatever time is left goes to the fixtures. --json is
# rewritten after every case, so a timeout keeps what was measured.
if [ -n "$roots" ]; then
  timeout -k 5 $(( $(left) - 60 )) python3 bench/compare_models.py $roots --bin ./devbin/etwebgpu \
    --peer .devshare/peer/et_webgpu_runner --specs bench/models --iters 20 \
    --json $R/models.json --md $R/models.md --profile-dir $R/profiles 2> >(tee $R/models.err) > $R/models.txt
  say "models: rc=$?"
fi
if [ $(left) -gt 20 ]; then
  timeout -k 5 $(( $(left) - 10 )) python3 bench/compare_models.py .devshare/conformance --bin ./devbin/etwebgpu \
    --peer .devshare/peer/et_webgpu_runner --no-torch --iters 20 \
    --json $R/fixtures.json --md $R/fixtures.md > $R/fixtures.txt 2> $R/fixtures.err
  say "fixtures: rc=$?"
fi
# A run cut short printed no tables: print them from the JSON it kept.
for k in models fixtures; do
  if [ -f $R/$k.json ] && ! grep -q '^summary' $R/$k.txt; then
    python3 bench/compare_models.py --from-json $R/$k.json --md $R/$k.md >> $R/$k.txt 2>&1
  fi
done
sed -n '/^== /,$p' $R/models.txt 2>/dev/null
grep -E '^(model|geometric mean) ' $R/fixtures.txt 2>/dev/null | sed 's/^/fixtures, ours and upstream only: /'
tar -C $OUT -czf $OUT/compare.tgz compare && rm -rf $R
say "done: $OUT/compare.tgz"
