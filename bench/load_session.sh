#!/usr/bin/env bash
# One command on the GPU machine (device tool; carry devbin/, .gl/ and .devshare/ with exporter/
# and conformance/ of ../shared; devbin/etwebgpu_old: the CLI of an earlier commit, optional): what a load
# costs, for docs/PERFORMANCE.md "Loading" (issue 32).
#   1. load time of conformance models with the persistent pipeline cache off, cold (a new empty
#      folder) and warm (filled by one load before), one process per load, the NVIDIA driver's own
#      shader disk cache off so only ours counts; then the whole conformance set cold and warm;
#   2. the fp32 Llama-3.2-1B-shape export (~6 GB): load time (file read, upload, compile) of this
#      tree and of devbin/etwebgpu_old, cache cold and warm, and `generate --json` with the load in its total;
#   3. an fp16 request on this adapter (no shader-f16): the error a user gets.
# Results: $OUT/load.tgz.
set -uo pipefail
START=$(date +%s)
say() { echo "[$(($(date +%s) - START)) s] $*"; }
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp LD_LIBRARY_PATH=$PWD/devbin
export __GL_SHADER_DISK_CACHE=0
R=$OUT/load; mkdir -p $R
CONF=.devshare/conformance
(timeout 300 python3 .devshare/exporter/export_pte.py bench/llm/llama_1b_spec.py /tmp/llm --name llama1b --no-ref64 \
   > $R/llm_export.log 2>&1; echo $? > /tmp/llm_export_rc) &
./devbin/etwebgpu info > $R/info.txt 2>&1
# The UNet and YOLO-style benchmark models, brought back for fp16 byte counts on a shader-f16
# adapter (byte counts do not depend on the GPU; this one has no shader-f16).
for m in unet yolo_style; do
  timeout 150 python3 .devshare/exporter/export_pte.py bench/models/$m.py /tmp/fp16models --name $m --atol rel \
    > $R/export_$m.log 2>&1 && ./devbin/etwebgpu conformance /tmp/fp16models > $R/fp16models_fp32_conformance.txt 2>&1
done
tar -C /tmp -czf $OUT/fp16models.tgz fp16models
say "fp16 models exported"
# ExecuTorch WebGPU's own op tests of et_vk.grid_priors, exported and run.
OPTEST_OPS=grid_priors timeout 120 python3 .devshare/exporter/upstream_optests/gen.py /tmp/optests > $R/optests_gen.log 2>&1
python3 .devshare/exporter/upstream_optests/gen.py --merge /tmp/optests >> $R/optests_gen.log 2>&1
./devbin/etwebgpu conformance /tmp/optests > $R/optests_grid_priors.txt 2>&1

# 3. fp16 on an adapter without shader-f16.
./devbin/etwebgpu run $CONF/add_bcast/model.pte --precision fp16 > $R/fp16.txt 2>&1; echo "rc=$?" >> $R/fp16.txt

# 1. Per model: the old binary and this one (cache off) as whole processes, then this one's load
# off, cold and warm; two rounds.
inputs_of() { ls "$1"/input_*.npy 2>/dev/null | sort -V | tr '\n' ' '; }
for name in llama_kv_cache_decode_steps et_vk_sdpa_standard conv2d_depthwise linear_q4gsw_mlp layer_norm; do
  d=$CONF/$name
  for rep in 1 2; do
    t0=$EPOCHREALTIME; ./devbin/etwebgpu_old run $d/model.pte -i $(inputs_of $d) > /dev/null 2>&1
    echo "$name old_process_s $(awk "BEGIN{print $EPOCHREALTIME - $t0}")" >> $R/models.txt
    t0=$EPOCHREALTIME; ETWEBGPU_CACHE_DIR=off ./devbin/etwebgpu run $d/model.pte -i $(inputs_of $d) --quiet > /dev/null 2>&1
    echo "$name new_off_process_s $(awk "BEGIN{print $EPOCHREALTIME - $t0}")" >> $R/models.txt
    echo "$name off $(ETWEBGPU_CACHE_DIR=off ./devbin/etwebgpu run $d/model.pte -i $(inputs_of $d) --cache-stats --quiet | grep '^load:')" >> $R/models.txt
    cold=$(mktemp -d)
    echo "$name cold $(ETWEBGPU_CACHE_DIR=$cold ./devbin/etwebgpu run $d/model.pte -i $(inputs_of $d) --cache-stats --quiet | grep '^load:')" >> $R/models.txt
    echo "$name warm $(ETWEBGPU_CACHE_DIR=$cold ./devbin/etwebgpu run $d/model.pte -i $(inputs_of $d) --cache-stats --quiet | grep '^load:')" >> $R/models.txt
  done
done
say "models done"
for mode in off cold warm; do
  case $mode in off) dir=off ;; cold) dir=/tmp/confcache; rm -rf $dir ;; warm) dir=/tmp/confcache ;; esac
  t0=$EPOCHREALTIME
  ETWEBGPU_CACHE_DIR=$dir ./devbin/etwebgpu conformance $CONF > $R/conformance_$mode.txt 2>&1
  echo "conformance $mode $(awk "BEGIN{print $EPOCHREALTIME - $t0}") s" >> $R/conformance_times.txt
done
say "conformance done"

# 2. The ~6 GB export.
while [ ! -f /tmp/llm_export_rc ]; do sleep 2; done
say "llm export rc=$(cat /tmp/llm_export_rc)"
L=/tmp/llm/llama1b
ls -la $L >> $R/llm_export.log 2>&1
if [ -f $L/model.pte ]; then
  sync; cat $L/model.pte > /dev/null  # the page cache holds the file for every load below
  li="$(inputs_of $L)"
  for rep in 1; do
    echo "new off $(ETWEBGPU_CACHE_DIR=off timeout 120 ./devbin/etwebgpu run $L/model.pte -i $li --cache-stats --quiet | grep '^load:')" >> $R/llm_load.txt
    if [ -x devbin/etwebgpu_old ]; then
      t0=$EPOCHREALTIME
      ETWEBGPU_CACHE_DIR=off timeout 120 ./devbin/etwebgpu_old run $L/model.pte -i $li > /dev/null 2>&1
      echo "old load+run $(awk "BEGIN{print $EPOCHREALTIME - $t0}") s" >> $R/llm_load.txt
      t0=$EPOCHREALTIME
      ETWEBGPU_CACHE_DIR=off timeout 120 ./devbin/etwebgpu run $L/model.pte -i $li --quiet > /dev/null 2>&1
      echo "new load+run $(awk "BEGIN{print $EPOCHREALTIME - $t0}") s" >> $R/llm_load.txt
    fi
  done
  rm -rf /tmp/llmcache
  echo "new cold $(ETWEBGPU_CACHE_DIR=/tmp/llmcache timeout 120 ./devbin/etwebgpu run $L/model.pte -i $li --cache-stats --quiet | grep '^load:')" >> $R/llm_load.txt
  echo "new warm $(ETWEBGPU_CACHE_DIR=/tmp/llmcache timeout 120 ./devbin/etwebgpu run $L/model.pte -i $li --cache-stats --quiet | grep '^load:')" >> $R/llm_load.txt
  prompt=$(python3 -c "import random; random.seed(1); print(','.join(str(random.randrange(128256)) for _ in range(128)))")
  t0=$EPOCHREALTIME
  ETWEBGPU_CACHE_DIR=/tmp/llmcache timeout 120 ./devbin/etwebgpu generate $L/model.pte --prompt-tokens "$prompt" \
    --max-new-tokens 64 --json > $R/generate.json 2> $R/generate.err
  echo "generate total (load + 128 prefill + 64 decode) $(awk "BEGIN{print $EPOCHREALTIME - $t0}") s" >> $R/llm_load.txt
fi
say "all done"
tar -C $OUT -czf $OUT/load.tgz load && rm -rf $R
