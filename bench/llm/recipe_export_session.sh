#!/usr/bin/env bash
# One command on the GPU machine (carry devbin/, .gl/, .devshare/ with exporter/): export the small
# versions of ExecuTorch's Llama recipe (bench/llm/llama_recipe_spec.py: q4, 8da4w, fp32) as
# conformance fixtures with steps, and run them with the current binary. Results: $OUT/recipe.tgz.
set -uo pipefail
START=$(date +%s)
say() { echo "[$(($(date +%s) - START)) s] $*"; }
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp LD_LIBRARY_PATH=$PWD/devbin
EX=$PWD/.devshare/exporter R=$OUT/recipe
mkdir -p $R
for q in ${RECIPE_QUANTS:-q4 8da4w fp32}; do
  ( RECIPE_QUANT=$q OMP_NUM_THREADS=4 timeout 300 python3 $EX/export_pte.py bench/llm/llama_recipe_spec.py $R/t_$q \
      --name llama_recipe_$q --no-ref64 > $R/export_$q.log 2>&1; say "export $q rc=$?" ) &
done
wait
for q in ${RECIPE_QUANTS:-q4 8da4w fp32}; do
  [ -f $R/t_$q/manifest.json ] || continue
  ./devbin/etwebgpu inspect $R/t_$q/llama_recipe_$q/model.pte > $R/inspect_$q.txt 2>&1
  timeout 60 ./devbin/etwebgpu conformance $R/t_$q > $R/conf_$q.txt 2>&1
  say "$q: $(tail -1 $R/conf_$q.txt)"
done
tar -C $OUT -czf $OUT/recipe.tgz recipe && rm -rf $R
