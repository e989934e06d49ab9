// Batch statistics for batch norm in training mode: one workgroup per channel c reduces the
// batch * inner elements x[n, c, k] in two passes (mean, then squared deviations) and writes
// save_mean[c], save_invstd[c] = 1 / sqrt(biased var + eps). UPDATE (defined) also moves the running
// stats: r = (1 - momentum) r + momentum * stat, with the unbiased variance (ATen's rule).
struct Params { channels: u32, inner: u32, batch: u32, pad0: u32, eps: f32, momentum: f32, pad1: u32, pad2: u32 };


const WG: u32 = 256u;

var<workgroup> part: array<f32, 256>;

// Tree sum of part[0..WG) returned to every invocation.
fn group_sum(lid: u32) -> f32 {
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { part[lid] = part[lid] + part[lid + s]; }
    workgroupBarrier();
  }
  let total = part[0];
  workgroupBarrier();
  return total;
}

fn at(c: u32, e: u32) -> f32 { return f32(X[((e / P.inner) * P.channels + c) * P.inner + e % P.inner]); }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let c = wid.x + wid.y * nwg.x;
  if (c >= P.channels) { return; }  // workgroup-uniform
  let count = P.batch * P.inner;
  var s = 0.0;
  for (var e = lid; e < count; e = e + WG) { s = s + at(c, e); }
  part[lid] = s;
  let mean = group_sum(lid) / f32(count);
  var q = 0.0;
  for (var e = lid; e < count; e = e + WG) {
    let d = at(c, e) - mean;
    q = q + d * d;
  }
  part[lid] = q;
  let sq = group_sum(lid);
  if (lid == 0u) {
    SAVE_MEAN[c] = SAVE_MEAN_T(mean);
    SAVE_INVSTD[c] = SAVE_INVSTD_T(inverseSqrt(sq / f32(count) + P.eps));
#if UPDATE
    {
      // One element per channel: the unbiased variance is 0 / 0 (NaN), as in ATen.
      var unbiased = bitcast<f32>(0x7fc00000u | P.pad0);
      if (count > 1u) { unbiased = sq / f32(count - 1u); }
      RUN_MEAN[c] = RUN_MEAN_T((1.0 - P.momentum) * f32(RUN_MEAN[c]) + P.momentum * mean);
      RUN_VAR[c] = RUN_VAR_T((1.0 - P.momentum) * f32(RUN_VAR[c]) + P.momentum * unbiased);
    }
#endif
  }
}
