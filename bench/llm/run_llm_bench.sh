#!/usr/bin/env bash
# On the GPU machine (see docs/PERFORMANCE.md "LLM decode"): exports ExecuTorch's Llama at
# Llama-3.2-1B shape with ../shared/exporter, then in the same command times `etwebgpu generate`
# on it and the same module in PyTorch (eager and CUDA-graph replay). Also makes the tokenizer
# fixtures of tests/data/tokenizers. Needs devbin/ (stripped etwebgpu + its shared libraries),
# .gl/ (Vulkan loader debs) and EXPORTER (a copy of ../shared/exporter) carried along.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$PWD/devbin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
R=${OUT:-/tmp/out}/r; mkdir -p "$R"
EXPORTER=${EXPORTER:-.devshare/exporter}
python3 tests/data/tokenizers/make_tokenizer_fixtures.py "$R/tok" > "$R/tok.log" 2>&1
./devbin/etwebgpu info > "$R/info.txt" 2>&1
[ -d .devshare/conformance ] && ./devbin/etwebgpu conformance .devshare/conformance > "$R/conformance.txt" 2>&1
t0=$(date +%s)
timeout 400 python3 "$EXPORTER/export_pte.py" bench/llm/llama_1b_spec.py /tmp/llm --name llama1b --no-ref64 > "$R/export.log" 2>&1
echo "export_s $(( $(date +%s) - t0 ))" >> "$R/times.txt"
ls -la /tmp/llm/llama1b >> "$R/export.log" 2>&1
prompt=$(python3 -c "import random; random.seed(1); print(','.join(str(random.randrange(128256)) for _ in range(128)))")
t0=$(date +%s)
timeout 150 ./devbin/etwebgpu generate /tmp/llm/llama1b/model.pte --prompt-tokens "$prompt" --max-new-tokens 64 --json > "$R/ours.json" 2> "$R/ours.err"
echo "ours_total_s $(( $(date +%s) - t0 ))" >> "$R/times.txt"
# PROFILE=1: also Dawn toggles that trade safety for speed, and the per-op GPU times.
if [ "${PROFILE:-0}" = 1 ]; then
ETWEBGPU_DAWN_TOGGLES=skip_validation timeout 150 ./devbin/etwebgpu generate /tmp/llm/llama1b/model.pte \
  --prompt-tokens "$prompt" --max-new-tokens 64 --json > "$R/ours_skip_validation.json" 2>&1
ETWEBGPU_DAWN_TOGGLES=skip_validation,disable_robustness,disable_workgroup_init timeout 150 ./devbin/etwebgpu generate \
  /tmp/llm/llama1b/model.pte --prompt-tokens "$prompt" --max-new-tokens 64 --json > "$R/ours_all_toggles.json" 2>&1
timeout 120 ./devbin/etwebgpu bench /tmp/llm/llama1b/model.pte --warmup 3 --iters 10 > "$R/bench.txt" 2>&1
fi
PYTHONPATH=$EXPORTER/python timeout 150 python3 bench/llm/torch_decode.py bench/llm/llama_1b_spec.py --prompt 128 --new 64 > "$R/torch.json" 2> "$R/torch.err"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$R/gpu.txt" 2>&1
tar -C "${OUT:-/tmp/out}" -czf "${OUT:-/tmp/out}/llm.tgz" r && rm -rf "$R"
