// softmax (MODE 0), log_softmax (1), layer_norm (2) and rms_norm (3) of short contiguous rows
// (inner == 1, len <= 32 * VPL): eight rows per workgroup, 32 invocations per row, the row held in
// registers (invocation `lane` holds elements lane + 32 * i, i < VPL). One read of X, two
// reductions (the norms: the mean, then the centred sum of squares, biased variance as PyTorch
// computes it; softmax: the max, propagating NaN, then the sum of exp(x - max)), one write.
// norm_row.wgsl's workgroup-per-row kernel reads a row three times and reduces over 256 lanes;
// for rows of a few hundred elements (ViT, Whisper) or fewer (Swin's windows of 49) that latency,
// and its idle lanes, were its cost.
// Computed in f32 whatever the storage.
//!include norm_row_params

override MODE: u32 = 2u;
override HAS_W: u32 = 0u;
override HAS_B: u32 = 0u;
override VPL: u32 = 8u;  // values per lane, at most VMAX
const VMAX: u32 = 32u;
const ROWS: u32 = 8u;

var<workgroup> red: array<f32, 256>;

//!include float_bits

// Sum over the 32 lanes of one row: a five-level tree in the row's own 32 slots. Every invocation
// of the workgroup calls it (the barriers are workgroup-wide).
fn row_sum(v: f32, lid: u32, lane: u32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = 16u; s > 0u; s = s / 2u) {
    if (lane < s) { red[lid] = red[lid] + red[lid + s]; }
    workgroupBarrier();
  }
  let r = red[lid - lane];
  workgroupBarrier();
  return r;
}

// Max (NaN first) over the 32 lanes of one row, as row_sum.
fn row_max(v: f32, lid: u32, lane: u32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = 16u; s > 0u; s = s / 2u) {
    if (lane < s) { red[lid] = nmax(red[lid], red[lid + s]); }
    workgroupBarrier();
  }
  let r = red[lid - lane];
  workgroupBarrier();
  return r;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let lane = lid % 32u;
  let r = (wid.x + wid.y * nwg.x) * ROWS + lid / 32u;
  let live = r < P.rows;  // rows past the end still reach every barrier
  let base = r * P.len;
  let xb = P.xoff + base;  // X from element P.xoff on (etwebgpu.rms_norm_select)
  let n = P.len;
  var v: array<f32, VMAX>;
  var s = 0.0;
  for (var i = 0u; i < VPL; i = i + 1u) {
    let k = lane + 32u * i;
    v[i] = 0.0;
    if (live && k < n) { v[i] = f32(X[xb + k]); }
    s = s + v[i];
  }
  if (MODE <= 1u) {
    var m = from_bits(0xff800000u);
    for (var i = 0u; i < VPL; i = i + 1u) {
      if (lane + 32u * i < n) { m = nmax(m, v[i]); }
    }
    m = row_max(m, lid, lane);
    var e = 0.0;
    for (var i = 0u; i < VPL; i = i + 1u) {
      if (lane + 32u * i < n) { e = e + exp(v[i] - m); }
    }
    let total = row_sum(e, lid, lane);
    let inv = 1.0 / total;
    let ls = log(total);
    for (var i = 0u; i < VPL; i = i + 1u) {
      let k = lane + 32u * i;
      if (live && k < n) {
        if (MODE == 0u) {
          O[base + k] = O_T(exp(v[i] - m) * inv);
        } else {
          O[base + k] = O_T(v[i] - m - ls);
        }
      }
    }
    return;
  }
  var mean = 0.0;
  var q = 0.0;
  if (MODE == 3u) {
    for (var i = 0u; i < VPL; i = i + 1u) { q = q + v[i] * v[i]; }
  } else {
    mean = row_sum(s, lid, lane) / f32(n);
    for (var i = 0u; i < VPL; i = i + 1u) {
      let d = select(0.0, v[i] - mean, lane + 32u * i < n);
      q = q + d * d;
    }
  }
  let rstd = inverseSqrt(row_sum(q, lid, lane) / f32(n) + P.eps);
  if (!live) { return; }
  for (var i = 0u; i < VPL; i = i + 1u) {
    let k = lane + 32u * i;
    if (k < n) {
      var y = (v[i] - mean) * rstd;
      if (HAS_W == 1u) { y = y * f32(W[k]); }
      if (HAS_B == 1u) { y = y + f32(B[k]); }
      O[base + k] = O_T(y);
    }
  }
#if STATS
  if (lane == 0u) {
    MEAN[r] = MEAN_T(mean);
    RSTD[r] = RSTD_T(rstd);
  }
#endif
}
