// Long contiguous rows of layer_norm, rms_norm and group_norm (a few rows of 10^4-10^6 elements,
// e.g. a GroupNorm of one group over C x H x W) split over many workgroups: norm_row would reduce
// each row in one. Row r's chunk j (CH elements, the last partial) is workgroup r * S + j,
// S = ceil(len / CH), in two dispatches:
//   PARTIALS: the chunk's (count, mean, centered sum of squares) into PART[r * S + j] (rms_norm:
//             (count, 0, sum of squares));
//   APPLY:    the row's S partials merged in order (Chan et al.: exact in real arithmetic, the
//             same in every workgroup of the row), then the chunk normalized as norm_row does.
// MODE and the weight index as in norm_row.wgsl; STATS: chunk 0 stores the row's mean and rstd.
//!include norm_row_params

override MODE: u32 = 2u;
override HAS_W: u32 = 0u;
override HAS_B: u32 = 0u;
const WG: u32 = 256u;
const CH: u32 = 4096u;  // elements per workgroup: 16 per invocation

//!include wg_reduce

fn widx(r: u32, k: u32) -> u32 {
  if (MODE == 4u) { return (r % P.groups) * P.cpg + k / P.hw; }
  return k;
}

//!include entry_main
  let chunks = (P.len + CH - 1u) / CH;
  let gi = wid.x + wid.y * nwg.x;
  if (gi >= P.rows * chunks) { return; }  // workgroup-uniform
  let r = gi / chunks;
  let j = gi % chunks;
  let base = r * P.len;
  let xb = P.xoff + base;  // X from element P.xoff on (etwebgpu.rms_norm_select)
  let k0 = j * CH;
  let k1 = min(P.len, k0 + CH);
#if PARTIALS
  let cnt = f32(k1 - k0);
  var mean = 0.0;
  if (MODE != 3u) {
    var s = 0.0;
    for (var k = k0 + lid; k < k1; k = k + WG) { s = s + f32(X[xb + k]); }
    mean = wg_sum(s, lid) / cnt;
  }
  var q = 0.0;
  for (var k = k0 + lid; k < k1; k = k + WG) {
    let d = f32(X[xb + k]) - mean;
    q = q + d * d;
  }
  q = wg_sum(q, lid);
  if (lid == 0u) { PART[gi] = vec4<f32>(cnt, mean, q, 0.0); }
#else
  var acc = PART[r * chunks];
  for (var i = 1u; i < chunks; i = i + 1u) {
    let b = PART[r * chunks + i];
    let n = acc.x + b.x;
    let delta = b.y - acc.y;
    acc = vec4<f32>(n, acc.y + delta * (b.x / n), acc.z + b.z + delta * delta * (acc.x * (b.x / n)), 0.0);
  }
  let mean = acc.y;
  let rstd = inverseSqrt(acc.z / f32(P.len) + P.eps);
  for (var k = k0 + lid; k < k1; k = k + WG) {
    var y = (f32(X[xb + k]) - mean) * rstd;
    let c = widx(r, k);
    if (HAS_W == 1u) { y = y * f32(W[c]); }
    if (HAS_B == 1u) { y = y + f32(B[c]); }
    O[base + k] = O_T(y);
  }
#if STATS
  if (j == 0u && lid == 0u) {
    MEAN[r] = MEAN_T(mean);
    RSTD[r] = RSTD_T(rstd);
  }
#endif
#endif
}
