#!/usr/bin/env bash
# Times the conv and linear shapes of the bench/models networks under each kernel route, on the
# GPU machine (devbin/ and .gl/ as for h200_session.sh), so route thresholds come from
# measurements: one etwebgpu_microbench call per (shape, route), GPU time by timestamp queries.
# Prints "case route gpu_ms kernels" lines; the default route is the one the runtime picks.
#   bash bench/route_sweep.sh [--iters N] [FAMILY ...]   (linear conv attn q4 q4pre q4x; default: all)
set -uo pipefail
iters=10
[ "${1:-}" = --iters ] && { iters=$2; shift 2; }
families=" ${*:-linear conv attn q4 q4pre q4x} "
want() { [[ "$families" == *" $1 "* ]]; }
for f in .gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done; ldconfig 2>/dev/null
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
export LD_LIBRARY_PATH=$PWD/devbin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mb=${MB:-./devbin/etwebgpu_microbench}  # MB: another build of it
sweep() {  # case, op key, routes...
  local c=$1 key=$2; shift 2
  for r in default "$@"; do
    local f=()
    [ "$r" != default ] && f=(--force "$key=$r")
    [[ "$r" == *=* ]] && { f=(); for kv in ${r//,/ }; do f+=(--force "$kv"); done; }  # routes of other keys: KEY=ROUTE[,KEY=ROUTE]
    $mb --case "$c" --iters "$iters" "${f[@]}" 2>&1 | awk -v c="$c" -v r="$r" '$1 == c {
      k = ""; for (i = 6; i <= NF; ++i) k = k " " $i; printf "%-22s %-16s %10s %s\n", c, r, $2, k }'
  done
}
# ViT-tiny (197 tokens, 192 wide, MLP 768, qkv 576), BERT-small (128 x 256, MLP 1024), GPT-2-small
# (64 x 512, MLP 2048, head 8192), LeViT-128S (196 / 49 / 16 tokens) and the Whisper-size encoder
# (1500 x 384); pre-norm projections (_ln: the LayerNorm in the GEMM's loads), GPT-2's among them
# (its Conv1D addmms are linears once loaded: addmm_as_linear).
want linear && for c in lin_197_192_192 lin_197_576_192 lin_197_768_192 lin_197_192_768 lin_128_768_256 lin_128_256_256 \
         lin_128_1024_256 lin_128_256_1024 lin_64_1536_512 lin_64_512_512 lin_64_2048_512 lin_64_512_2048 lin_64_8192_512 \
         lin_196_256_128 lin_196_128_256 lin_49_384_256 lin_49_768_384 lin_16_384_384 lin_1500_384_384 lin_1500_384_1536 \
         lin_1500_1536_384 lin_197_1536_192 lin_64_512_4096 lin_197_192_3072 lin_197_576_192_ln lin_197_768_192_ln \
         lin_64_1536_512_ln lin_64_2048_512_ln; do
  sweep $c matmul vec4 splitk small small16 large_m64
done
# ResNet-18 3x3 layers, UNet levels, MobileNet-like 1x1 convs at 7x7, SqueezeNet's fire modules at
# 27x27 and 13x13 and its 1x1 classifier.
want conv && for c in conv_64_64_56_3 conv_128_128_28_3 conv_256_256_14_3 conv_512_512_7_3 conv_16_16_256_3 conv_32_32_128_3 \
         conv_960_160_7_1 conv_160_960_7_1 conv_256_32_27_1 conv_32_128_27_3 conv_384_48_13_1 conv_48_192_13_3 \
         conv_64_256_13_3 conv_512_1000_13_1; do
  sweep $c conv gemm gemm_splitk gemm_small gemm_large_m64 direct
done
# Attention at ViT-tiny's and the Whisper-size encoder's shapes: one fused pass or three kernels.
# "decode" with more than 8 rows a head runs the one-pass kernel (sdpa_decode_wide) where it fits.
want attn && for c in attn_3_197_64 attn_4_128_64 attn_8_64_64 attn_4_196_16 attn_8_49_32 attn_6_1500_64; do
  sweep $c sdpa flash decode staged
done
# The 1B Llama's decode GEMVs (4-bit and 8da4w, one token): q/k/v stacked, o, gate/up paired,
# down, the vocabulary head; _xL repeats a layer's weights past the L2, as a model streams them.
# Layouts of gemv_rows: outputs per invocation x invocations along K; the row and the scales read
# from memory (the default: staged in workgroup memory); 8da4w sums in floats (default: integers).
want q4 && for c in q4lin_3072_2048_x32 q4lin_2048_2048_x32 q4lin_16384_2048_x4 q4lin_2048_8192_x8 q4lin_128256_2048 \
                   dq8ca_3072_2048_x32 dq8ca_16384_2048_x4 dq8ca_2048_8192_x8; do
  sweep $c q4_gemv_rows 2x64 4x64 2x32 4x32 q4_gemv_rows_x=global q4_gemv_rows_sc=shared dq8ca_gemv_rows=float
done
# q/k/v- and gate/up-shaped GEMVs taking their RMSNorm in (its row and weights read into registers,
# the default, or by the loop), then the shapes above: each step requesting its own chunks
# (q4_gemv_rows_pre=0; the float default: the next step's requested before the current one is
# summed; the 8da4w sweep tries that instead) and the layouts (q4pre).
want q4pre && for c in q4norm_3072_2048_x32 q4norm_16384_2048_x4; do
  sweep $c q4_gemv_rows_norm loop q4_gemv_rows=2x64 q4_gemv_rows_pre=0
done
want q4pre && for c in q4lin_3072_2048_x32 q4lin_2048_2048_x32 q4lin_16384_2048_x4 q4lin_2048_8192_x8 q4lin_128256_2048; do
  sweep $c q4_gemv_rows 1x64 2x64 4x32 q4_gemv_rows_pre=0
done
want q4pre && for c in dq8ca_3072_2048_x32 dq8ca_16384_2048_x4 dq8ca_2048_8192_x8 dq8ca_128256_2048; do
  sweep $c q4_gemv_rows 2x64 4x32 4x64 q4_gemv_rows_pre=1
done
# The same shapes, the layouts (but 4x32, never the best) with the row staged and read from memory (q4x).
want q4x && for c in q4lin_3072_2048_x32 q4lin_2048_2048_x32 q4lin_16384_2048_x4 q4lin_2048_8192_x8 q4lin_128256_2048 \
                    dq8ca_16384_2048_x4 dq8ca_2048_8192_x8; do
  r=()
  for l in 2x64 4x64 2x32; do r+=("q4_gemv_rows=$l,q4_gemv_rows_x=shared" "q4_gemv_rows=$l,q4_gemv_rows_x=global"); done
  sweep $c q4_gemv_rows "${r[@]}"
done
