#!/usr/bin/env bash
# Route A/B on real exports, on the GPU machine (devbin/ and .gl/ as for compare_session.sh; the
# .pte files carried, e.g. in .devshare/m/): each model under each route set, one `etwebgpu bench`
# process apiece, the sets of a model back to back so they share the machine's state. Prints, per
# model and route set, the median wall time of a run (upload, run, read back), the GPU total of one
# profiled run (dispatch timestamps) with its dispatch count, and the kernel variants matching
# GREP (default: every line of the variant table).
#   bash bench/route_ab.sh [--iters N] [--grep REGEX] MODEL.pte... -- [ROUTES]...
# ROUTES: "default" (the automatic routes) or OP=ROUTE[,OP=ROUTE...]; default: "default".
# Measured with it at stop 49: SqueezeNet with conv=gemm_splitk against the small-tile conv.
set -uo pipefail
iters=20
pattern='\['
models=()
while [ $# -gt 0 ]; do
  case "$1" in
    --iters) iters=$2; shift 2 ;;
    --grep) pattern=$2; shift 2 ;;
    --) shift; break ;;
    *) models+=("$1"); shift ;;
  esac
done
routes=("$@")
[ ${#routes[@]} -eq 0 ] && routes=(default)
[ ${#models[@]} -eq 0 ] && { echo "usage: bench/route_ab.sh [--iters N] [--grep REGEX] MODEL.pte... -- [ROUTES]..." >&2; exit 2; }
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -e $icd ]; then  # the GPU machine; elsewhere the local Vulkan driver runs it
  for f in .gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done; ldconfig 2>/dev/null
  export VK_DRIVER_FILES=$icd
fi
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp} LD_LIBRARY_PATH=$PWD/devbin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bin=${BIN:-./devbin/etwebgpu}
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null
for m in "${models[@]}"; do
  for r in "${routes[@]}"; do
    f=()
    if [ "$r" != default ]; then for kv in ${r//,/ }; do f+=(--force-route "$kv"); done; fi
    echo "== $(basename "$m") $r"
    "$bin" bench "$m" --iters "$iters" "${f[@]}" 2>&1 | awk -v p="$pattern" '
      /^wall per run/ || /^GPU total/ { print; next }
      /kernel variant/ { v = 1; next }
      v && NF && $0 ~ p { print }'
  done
done
