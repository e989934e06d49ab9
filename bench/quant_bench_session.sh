#!/usr/bin/env bash
# One command on the GPU machine (carry devbin/, .gl/, .devshare/ with exporter/, peer/ and
# optests_q/ (ExecuTorch WebGPU's quantized op tests, exported)): the int8 and 8da4w figures of
# docs/PERFORMANCE.md, side by side.
#   1. exports (in parallel): ResNet-18 and MobileNetV2 at 224 in fp32 and static int8 (bench/models),
#      and the Llama-3.2-1B shape with 8da4w and with 4-bit weight-only layers
#      (tests/fixtures/specs, LLAMA_SIZE=1b);
#   2. the four CNNs timed by etwebgpu, the upstream runner, PyTorch eager and a PyTorch CUDA graph
#      (bench/compare_models.py; for the int8 models PyTorch runs the fake-quantized module);
#   3. the quantized op tests and the repository's quantized fixtures on this GPU;
#   4. `etwebgpu generate` (128-token prompt, 64 new tokens) and `etwebgpu bench` on both 1B Llamas,
#      and one token through the 1B projections as 4-bit and as 8da4w (microbench);
#   5. the small exports of ExecuTorch's own Llama recipe (bench/llm/llama_recipe_spec.py), run here
#      and brought back as fixtures.
# Results: $OUT/qbench.tgz.
set -uo pipefail
START=$(date +%s)
say() { echo "[$(($(date +%s) - START)) s] $*"; }
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp LD_LIBRARY_PATH=$PWD/devbin
EX=$PWD/.devshare/exporter R=$OUT/qbench W=/tmp/qm
mkdir -p $R $W
./devbin/etwebgpu info > $R/info.txt 2>&1
LLMS="llama_8da4w_kv_decode llama_q4_kv_decode"
for s in $LLMS; do
  ( LLAMA_SIZE=1b OMP_NUM_THREADS=4 MKL_NUM_THREADS=4 nice -n 5 timeout 420 python3 $EX/export_pte.py tests/fixtures/specs/$s.py \
      /tmp/llm_$s --name $s --no-ref64 > $R/export_$s.log 2>&1; echo $? > /tmp/llm_$s.rc ) &
done
for q in q4 fp32 8da4w; do
  ( RECIPE_QUANT=$q OMP_NUM_THREADS=2 timeout 300 python3 $EX/export_pte.py bench/llm/llama_recipe_spec.py $R/recipe_$q \
      --name llama_recipe_$q --no-ref64 > $R/recipe_$q.log 2>&1; echo $? > /tmp/recipe_$q.rc ) &
done
pids=""
for s in resnet18 mobilenet_v2 q8_resnet18 q8_mobilenet_v2; do
  case $s in q8_*) tol=--no-ref64 ;; *) tol="--atol rel" ;; esac
  ( OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 timeout 300 python3 $EX/export_pte.py bench/models/$s.py $W/$s --name $s $tol \
      > $R/export_$s.log 2>&1; say "exported $s rc=$?" ) &
  pids="$pids $!"
done
wait $pids
roots=$(for d in $W/*/; do [ -f $d/manifest.json ] && echo $d; done)
timeout 200 python3 bench/compare_models.py $roots --bin ./devbin/etwebgpu --peer .devshare/peer/et_webgpu_runner \
  --specs bench/models --iters 20 --json $R/cnn.json --md $R/cnn.md --profile-dir $R/profiles > $R/cnn.txt 2> $R/cnn.err
say "cnn compare rc=$?"
for m in $W/*/*/model.pte; do
  n=$(basename $(dirname $m)); timeout 30 ./devbin/etwebgpu bench $m --iters 20 --json > $R/bench_$n.json 2>&1
done
timeout 60 ./devbin/etwebgpu conformance .devshare/optests_q > $R/conf_optests_q.txt 2>&1
say "optests: $(tail -1 $R/conf_optests_q.txt)"
timeout 60 ./devbin/etwebgpu conformance tests/fixtures/exports > $R/conf_fixtures.txt 2>&1
say "fixtures: $(tail -1 $R/conf_fixtures.txt)"
for s in $LLMS; do
  while [ ! -f /tmp/llm_$s.rc ]; do sleep 2; done
  say "llm export $s rc=$(cat /tmp/llm_$s.rc)"
done
timeout 60 ./devbin/etwebgpu_microbench --iters 20 $(for c in q4lin_2048_2048 dq8ca_2048_2048 q4lin_8192_2048 dq8ca_8192_2048 \
  q4lin_2048_8192 dq8ca_2048_8192; do echo --case $c; done) > $R/micro.txt 2>&1
say "micro done"
prompt=$(python3 -c "import random; random.seed(1); print(','.join(str(random.randrange(128256)) for _ in range(128)))")
for s in $LLMS; do
  m=/tmp/llm_$s/$s/model.pte
  ls -la $m >> $R/export_$s.log 2>&1
  timeout 60 ./devbin/etwebgpu conformance /tmp/llm_$s > $R/conf_$s.txt 2>&1
  timeout 100 ./devbin/etwebgpu generate $m --prompt-tokens "$prompt" --max-new-tokens 64 --json > $R/gen_$s.json 2> $R/gen_$s.err
  timeout 60 ./devbin/etwebgpu bench $m --warmup 2 --iters 10 --json > $R/bench_$s.json 2>&1
  say "$s: $(tail -1 $R/conf_$s.txt) $(cat $R/gen_$s.json | head -c 300)"
done
for q in q4 fp32 8da4w; do
  for i in $(seq 30); do [ -f /tmp/recipe_$q.rc ] && break; sleep 1; done
  say "recipe $q export rc=$(cat /tmp/recipe_$q.rc 2>/dev/null)"
  [ -f $R/recipe_$q/manifest.json ] || continue
  ./devbin/etwebgpu inspect $R/recipe_$q/llama_recipe_$q/model.pte > $R/recipe_inspect_$q.txt 2>&1
  timeout 30 ./devbin/etwebgpu conformance $R/recipe_$q > $R/recipe_conf_$q.txt 2>&1
  say "recipe $q: $(tail -1 $R/recipe_conf_$q.txt)"
done
tar -C $OUT -czf $OUT/qbench.tgz qbench && rm -rf $R
say done
