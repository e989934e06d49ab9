#!/usr/bin/env bash
# One command on the GPU machine (the device tool; carry devbin/, .gl/, .devshare/ as for
# h200_session.sh; devbin/ built from this tree): exports every spec of bench/models/ with the
# shared exporter (EXPORT_JOBS at a time, the slowest first), then times each model with etwebgpu,
# the upstream runner, PyTorch eager and a PyTorch CUDA graph (bench/compare_models.py), then the
# public fixtures with etwebgpu and the upstream runner only. Ends within BUDGET_S + 10 s (540 s);
# results in $OUT/compare.tgz, summaries on stdout.
# Knobs: BUDGET_S (530), EXPORT_S (export phase, 55% of BUDGET_S: a spec not started by then is
# skipped, a running one is stopped), EXPORT_JOBS (16 processes of one thread each: the 16 cores),
# ITERS (timed runs per model and runtime, 20), BASELINE (an earlier run's models.json: our GPU
# time per model against it, the steadier figure across machines).
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

# Exporting is CPU work (float32 and float64 eager references, lowering, serialising), mostly on
# one thread: one process per model with one thread, EXPORT_JOBS at a time. The slowest exports
# (20-70 s each, measured 17 at once on the H200's 16 cores; the transformers ones spend ~17 s
# importing it) start first so that the small ones fill in behind them. Each writes its own tree, so no two share a manifest.
EXPORT_END=$((START + ${EXPORT_S:-$(( ${BUDGET_S:-530} * 55 / 100 ))}))
JOBS=${EXPORT_JOBS:-16}
SLOW="swin_tiny gpt2_decoder whisper_encoder bert_encoder levit_128s densenet121 mobilevit_xs deit_tiny convnext_tiny efficientformer_l1"
all=$(ls bench/models/[a-z]*.py | grep -v /q8_)  # the int8 models: bench/quant_bench_session.sh (--no-ref64)
specs=$( (for n in $SLOW; do echo "$all" | grep -x "bench/models/$n.py"; done; echo "$all") | awk '!seen[$0]++')
for s in $specs; do
  n=$(basename $s .py)
  while [ $(jobs -rp | wc -l) -ge $JOBS ]; do wait -n; done
  t=$((EXPORT_END - $(date +%s))); [ $t -gt 240 ] && t=240
  if [ $t -lt 20 ]; then say "skipped $n: the export phase is over"; continue; fi
  ( OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 timeout $t python3 .devshare/exporter/export_pte.py $s $W/$n --atol rel \
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
    --peer .devshare/peer/et_webgpu_runner --specs bench/models --iters ${ITERS:-20} \
    --json $R/models.json --md $R/models.md --profile-dir $R/profiles ${BASELINE:+--baseline "$BASELINE"} \
    2> >(tee $R/models.err) > $R/models.txt
  say "models: rc=$?"
fi
if [ $(left) -gt 20 ]; then
  timeout -k 5 $(( $(left) - 10 )) python3 bench/compare_models.py .devshare/conformance --bin ./devbin/etwebgpu \
    --peer .devshare/peer/et_webgpu_runner --no-torch --iters ${ITERS:-20} \
    --json $R/fixtures.json --md $R/fixtures.md > $R/fixtures.txt 2> $R/fixtures.err
  say "fixtures: rc=$?"
fi
# A run cut short printed no tables: print them from the JSON it kept.
for k in models fixtures; do
  if [ -f $R/$k.json ] && ! grep -q '^summary' $R/$k.txt; then
    python3 bench/compare_models.py --from-json $R/$k.json --md $R/$k.md ${BASELINE:+--baseline "$BASELINE"} >> $R/$k.txt 2>&1
  fi
done
sed -n '/^== /,$p' $R/models.txt 2>/dev/null
grep -E '^(model|geometric mean) ' $R/fixtures.txt 2>/dev/null | sed 's/^/fixtures, ours and upstream only: /'
tar -C $OUT -czf $OUT/compare.tgz compare && rm -rf $R
say "done: $OUT/compare.tgz"
