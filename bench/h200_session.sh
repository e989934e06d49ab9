#!/usr/bin/env bash
# One command on the GPU machine (the device tool; carry devbin/, .gl/, .devshare/): conformance at
# fp32 and fp16, microbenchmarks, fixture benches, the 4-bit Llama-1B-shape decoder, and the fp32
# Llama-1B export decoded by etwebgpu and by PyTorch eager / CUDA graph. Results in $OUT/run2.tgz.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp LD_LIBRARY_PATH=$PWD/devbin
R=$OUT/r; mkdir -p $R
(timeout 400 python3 .devshare/exporter/export_pte.py bench/llm/llama_1b_spec.py /tmp/llm --name llama1b --no-ref64 > $R/export.log 2>&1; echo done > /tmp/export_done) &
./devbin/etwebgpu info > $R/info.txt 2>&1
timeout 120 ./devbin/etwebgpu conformance .devshare/conformance > $R/conf32.txt 2>&1
timeout 60 ./devbin/etwebgpu conformance .devshare/conformance --precision fp16 > $R/conf16.txt 2>&1
timeout 150 ./devbin/etwebgpu_microbench --case gemm_4096 --case gemm_2048 --case conv3x3_64 --case sdpa_1x8x1024x64 > $R/micro.txt 2>&1
for c in llama_kv_cache_decode_steps sdpa_causal dynamic_mlp_seq; do echo "$c $(timeout 60 ./devbin/etwebgpu bench .devshare/conformance/$c/model.pte --json 2>&1 | tail -1)"; done > $R/bench_fixtures.txt
timeout 60 ./devbin/etwebgpu_q4_llama --steps 32 > $R/q4_fp32.txt 2>&1
while [ ! -f /tmp/export_done ]; do sleep 5; done
ls -la /tmp/llm/llama1b >> $R/export.log 2>&1
prompt=$(python3 -c "import random; random.seed(1); print(','.join(str(random.randrange(128256)) for _ in range(128)))")
timeout 120 ./devbin/etwebgpu generate /tmp/llm/llama1b/model.pte --prompt-tokens "$prompt" --max-new-tokens 64 --json > $R/ours.json 2> $R/ours.err
timeout 60 ./devbin/etwebgpu bench /tmp/llm/llama1b/model.pte --json --iters 10 > $R/llm_bench.json 2>&1
PYTHONPATH=.devshare/exporter/python timeout 150 python3 bench/llm/torch_decode.py bench/llm/llama_1b_spec.py --prompt 128 --new 64 > $R/torch.json 2> $R/torch.err
tar -C $OUT -czf $OUT/run2.tgz r && rm -rf $R
