#!/usr/bin/env bash
# One command on the GPU machine (the device tool; carry devbin/, .gl/, .devshare/ with exporter/,
# peer/ and conformance/ of ../shared): everything the performance pages quote, in one run so every
# figure shares the machine state. In order, with the fp32 Llama-1B export running in the background:
#   1. bench/compare_session.sh: bench/models exported and timed by etwebgpu, the upstream runner,
#      PyTorch eager and a PyTorch CUDA graph, then the public fixtures (ours / upstream);
#   2. the Llama-1B export decoded by `etwebgpu generate`, its per-op bench, and PyTorch eager /
#      CUDA graph on the same module (bench/llm/torch_decode.py);
#   3. kernel microbenchmarks, all in one process (the microbench brings the GPU to its working
#      clock before each case: --warm-ms), with the GPU clock sampled meanwhile, then
#      bench/route_sweep.sh (model shapes under every route, for the route thresholds);
#   4. conformance at fp32.
# Results: $OUT/session.tgz.
set -uo pipefail
START=$(date +%s)
say() { echo "[$(($(date +%s) - START)) s] $*"; }
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp LD_LIBRARY_PATH=$PWD/devbin
R=$OUT/session; mkdir -p $R
(nice -n 5 timeout 330 python3 .devshare/exporter/export_pte.py bench/llm/llama_1b_spec.py /tmp/llm --name llama1b --no-ref64 \
   > $R/llm_export.log 2>&1; echo $? > /tmp/llm_export_rc) &

BUDGET_S=${COMPARE_S:-270} OUT=$R bash bench/compare_session.sh > $R/compare_session.txt 2>&1
say "compare done"

while [ ! -f /tmp/llm_export_rc ]; do sleep 2; done
say "llm export rc=$(cat /tmp/llm_export_rc)"
ls -la /tmp/llm/llama1b >> $R/llm_export.log 2>&1
prompt=$(python3 -c "import random; random.seed(1); print(','.join(str(random.randrange(128256)) for _ in range(128)))")
timeout 100 ./devbin/etwebgpu generate /tmp/llm/llama1b/model.pte --prompt-tokens "$prompt" --max-new-tokens 64 --json \
  > $R/llm_ours.json 2> $R/llm_ours.err
timeout 60 ./devbin/etwebgpu bench /tmp/llm/llama1b/model.pte --warmup 2 --iters 10 > $R/llm_bench.txt 2>&1
timeout 40 ./devbin/etwebgpu bench /tmp/llm/llama1b/model.pte --warmup 2 --iters 10 --json > $R/llm_bench.json 2>&1
say "llm ours done"
PYTHONPATH=.devshare/exporter/python timeout 120 python3 bench/llm/torch_decode.py bench/llm/llama_1b_spec.py --prompt 128 --new 64 \
  > $R/llm_torch.json 2> $R/llm_torch.err
say "llm torch done"

nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu --format=csv -lms 50 > $R/clocks.csv 2>&1 &
SMI=$!
timeout 120 ./devbin/etwebgpu_microbench --iters 20 $(for c in gemm_2048 conv3x3_64 sdpa_1x8x1024x64 gemv_4096 \
  dispatch_chain_512 small_cnn gemm_4096 add gemm_1024; do echo --case $c; done) > $R/micro.txt 2>&1
kill $SMI
say "micro done"
timeout 60 bash bench/route_sweep.sh > $R/route_sweep.txt 2>&1
say "route sweep done"
timeout 60 ./devbin/etwebgpu conformance .devshare/conformance > $R/conf32.txt 2>&1
say "conformance: $(tail -1 $R/conf32.txt)"
tar -C $OUT -czf $OUT/session.tgz session && rm -rf $R
say "done"
