// The fused LayerNorm's row statistics for the GEMMs that normalise A in their loads
// (//!include matmul_row_stats under NORM_A after `const LPR`, the invocations a row: a power of
// two from 4 to 16; the row of invocation lid is lid / LPR): matmul_gemm.wgsl (4) and
// matmul_gemm_small.wgsl (8 or 16). Mean, then the centred sum of squares, biased variance as
// PyTorch computes it; four loads in flight per step of each pass (a serial loop paid the load
// latency per quad: the fused call was slower than the pair).
override HAS_NW: u32 = 0u;
override HAS_NB: u32 = 0u;
var<workgroup> nsum: array<f32, 256>;

// The sum of v over the LPR invocations of lid's row, in quads.
fn row_sum(v: f32, lid: u32) -> f32 {
  nsum[lid] = v;
  workgroupBarrier();
  var r = 0.0;
  for (var g = lid & ~(LPR - 1u); g < (lid | (LPR - 1u)); g = g + 4u) {
    r = r + ((nsum[g] + nsum[g + 1u]) + (nsum[g + 2u] + nsum[g + 3u]));
  }
  workgroupBarrier();
  return r;
}

// Mean and rstd of row `row` of the batch item at element offset ao (every invocation of the row
// gets them). Uniform control flow only.
fn row_stats(ao: u32, row: u32, lid: u32) -> vec2<f32> {
  let base = (ao + row * P.K) / 4u;
  let nq = P.K / 4u;
  let l = lid % LPR;
  var s = vec4<f32>(0.0);
  var q = l;
  for (; q + 3u * LPR < nq; q = q + 4u * LPR) {
    s = s + ((vec4<f32>(A[base + q]) + vec4<f32>(A[base + q + LPR])) +
             (vec4<f32>(A[base + q + 2u * LPR]) + vec4<f32>(A[base + q + 3u * LPR])));
  }
  for (; q < nq; q = q + LPR) { s = s + vec4<f32>(A[base + q]); }
  let mean = row_sum(s.x + s.y + s.z + s.w, lid) / f32(P.K);
  var v = vec4<f32>(0.0);
  for (q = l; q + 3u * LPR < nq; q = q + 4u * LPR) {
    let d0 = vec4<f32>(A[base + q]) - mean;
    let d1 = vec4<f32>(A[base + q + LPR]) - mean;
    let d2 = vec4<f32>(A[base + q + 2u * LPR]) - mean;
    let d3 = vec4<f32>(A[base + q + 3u * LPR]) - mean;
    v = v + (fma(d0, d0, d1 * d1) + fma(d2, d2, d3 * d3));
  }
  for (; q < nq; q = q + LPR) {
    let d = vec4<f32>(A[base + q]) - mean;
    v = fma(d, d, v);
  }
  let var_ = row_sum(v.x + v.y + v.z + v.w, lid) / f32(P.K);
  return vec2<f32>(mean, inverseSqrt(var_ + P.eps));
}
