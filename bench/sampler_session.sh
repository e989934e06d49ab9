#!/usr/bin/env bash
# One command on the GPU machine (carry devbin/, .gl/, .devshare/ with exporter/): what the token
# pick costs in `generate`. The small recipe model (2 layers, dim 128) with Llama-3's 128256-token
# vocabulary and a 512-position cache, where the pick is a large part of a step; `generate --json`
# (8-token prompt, NEW new tokens, default 400) in each of MODES (default "greedy topk"; topk:
# temperature 0.8, top-k 40, top-p 0.9; topp: temperature 0.8, top-p 0.9; temp: temperature 0.8),
# with ours and each of BINS="LABEL=PATH ..." alternating, ROUNDS times (default 2).
# Results: $OUT/sampler.txt ("label mode decode_tok_s").
set -uo pipefail
for f in .gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done; ldconfig 2>/dev/null
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp LD_LIBRARY_PATH=$PWD/devbin
export PYTHONPATH=$PWD/.devshare/exporter/python${PYTHONPATH:+:$PYTHONPATH}
LLAMA_VOCAB=128256 LLAMA_CONTEXT=512 OMP_NUM_THREADS=8 timeout 200 python3 .devshare/exporter/export_pte.py \
  bench/llm/llama_recipe_spec.py /tmp/sampler --name vocab128k --no-ref64 > $OUT/export.log 2>&1 || { tail -5 $OUT/export.log; exit 1; }
m=/tmp/sampler/vocab128k/model.pte
prompt=$(python3 -c "print(','.join(str(i * 7919 % 128256) for i in range(8)))")
for r in $(seq ${ROUNDS:-2}); do
  for b in "ours=./devbin/etwebgpu" ${BINS:-}; do
    for mode in ${MODES:-greedy topk}; do
      case $mode in
        greedy) opts="" ;;
        topk) opts="--temperature 0.8 --top-k 40 --top-p 0.9 --seed 1" ;;
        topp) opts="--temperature 0.8 --top-p 0.9 --seed 1" ;;
        temp) opts="--temperature 0.8 --seed 1" ;;
        *) echo "unknown mode $mode" >&2; exit 2 ;;
      esac
      tok=$(timeout 60 ${b#*=} generate $m --prompt-tokens "$prompt" --max-new-tokens ${NEW:-400} --json --quiet $opts 2>&1 |
            python3 -c "import json, sys; print(round(json.load(sys.stdin)['decode_tok_s'], 1))" 2>&1 | tail -1)
      echo "${b%%=*} $mode $tok" | tee -a $OUT/sampler.txt
    done
  done
done
