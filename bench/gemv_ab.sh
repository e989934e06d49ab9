#!/usr/bin/env bash
# A/B of the 1B decode GEMVs between two microbench builds, alternating, on the GPU machine
# (devbin/ and .gl/ as for route_sweep.sh): prints "case build gpu_ms GB/s" per run.
#   bash bench/gemv_ab.sh OLD_MB NEW_MB [ROUNDS]
set -uo pipefail
for f in .gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done; ldconfig 2>/dev/null
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
export LD_LIBRARY_PATH=$PWD/devbin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
old=$1 new=$2 rounds=${3:-2}
for r in $(seq "$rounds"); do
  for c in q4lin_3072_2048_x32 q4lin_2048_2048_x32 q4lin_16384_2048_x4 q4lin_2048_8192_x8 q4lin_128256_2048 \
           dq8ca_3072_2048_x32 dq8ca_16384_2048_x4 dq8ca_2048_8192_x8; do
    for b in old new; do
      mb=$old; [ $b = new ] && mb=$new
      $mb --case "$c" --iters 20 2>&1 | awk -v c="$c" -v b="$b" '$1 == c { printf "%-22s %-4s %10s %10s\n", c, b, $2, $5 }'
    done
  done
done
