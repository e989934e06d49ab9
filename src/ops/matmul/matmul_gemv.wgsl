// GEMV for M == 1: c[b, n] = alpha * sum_k a[b, k] * op(B[b])[k, n] + beta * bias[n].
// TRANS_B = 1 (B stored [N, K]): 4 outputs per workgroup, 64 invocations stride over K of one
// weight row and reduce in workgroup memory. TRANS_B = 0 (B [K, N]): 64 columns (x4 for vec4) per
// workgroup, 4 K-slices reduced at the end; reads stay coalesced along N.
// `gemv_vec4` reads vec4s (along K for [N, K], along N for [K, N]); valid when K % 4 == 0 and,
// for [K, N], N % 4 == 0.
// A, B, BIAS, C and P come from the generated preamble (A and B vec4 arrays when VEC4 is defined).
//!include matmul_params

override TRANS_B: u32 = 0u;
override HAS_BIAS: u32 = 0u;

var<workgroup> red: array<vec4<f32>, 256>;

//!include matmul_batch

fn store_one(z: u32, n: u32, acc: f32) {
  var v = P.alpha * acc;
  if (HAS_BIAS == 1u) { v = v + P.beta * f32(BIAS[n * P.bias_sn]); }
  let o = z * P.cstride + n;
  C[o] = C_T(epilogue(v, o));
}

// Tree-reduces red[row*64 .. row*64+63] into red[row*64].
fn reduce64(lid: u32) {
  let t = lid % 64u;
  for (var w = 32u; w > 0u; w = w >> 1u) {
    if (t < w) { red[lid] = red[lid] + red[lid + w]; }
    workgroupBarrier();
  }
}

#if !VEC4
@compute @workgroup_size(256)
fn gemv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let blk = wid.x + wid.y * nwg.x;  // column block, folded into 2-D past the per-dim limit
  let offs = batch_offsets(wid.z);
  if (TRANS_B == 1u) {
    let n = blk * 4u + lid / 64u;
    var s = 0.0;
    if (n < P.N) {
      for (var k = lid % 64u; k < P.K; k = k + 64u) { s = fma(f32(A[offs.x + k]), f32(B[offs.y + n * P.K + k]), s); }
    }
    red[lid] = vec4<f32>(s, 0.0, 0.0, 0.0);
    workgroupBarrier();
    reduce64(lid);
    if (lid % 64u == 0u && n < P.N) { store_one(wid.z, n, red[lid].x); }
  } else {
    let n = blk * 64u + lid % 64u;
    var s = 0.0;
    if (n < P.N) {
      for (var k = lid / 64u; k < P.K; k = k + 4u) { s = fma(f32(A[offs.x + k]), f32(B[offs.y + k * P.N + n]), s); }
    }
    red[lid] = vec4<f32>(s, 0.0, 0.0, 0.0);
    workgroupBarrier();
    if (lid < 64u && n < P.N) { store_one(wid.z, n, red[lid].x + red[lid + 64u].x + red[lid + 128u].x + red[lid + 192u].x); }
  }
}

#else
@compute @workgroup_size(256)
fn gemv_vec4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
  let blk = wid.x + wid.y * nwg.x;
  let offs = batch_offsets(wid.z);
  let K4 = P.K / 4u;
  if (TRANS_B == 1u) {
    let n = blk * 4u + lid / 64u;
    var s = vec4<f32>(0.0);
    if (n < P.N) {
      let ab = offs.x / 4u;
      let bb = (offs.y + n * P.K) / 4u;
      for (var k = lid % 64u; k < K4; k = k + 64u) { s = fma(vec4<f32>(A[ab + k]), vec4<f32>(B[bb + k]), s); }
    }
    red[lid] = vec4<f32>(s.x + s.y + s.z + s.w, 0.0, 0.0, 0.0);
    workgroupBarrier();
    reduce64(lid);
    if (lid % 64u == 0u && n < P.N) { store_one(wid.z, n, red[lid].x); }
  } else {
    let q = blk * 64u + lid % 64u;  // quad of 4 columns
    let n = q * 4u;
    var s = vec4<f32>(0.0);
    if (n < P.N) {
      for (var k = lid / 64u; k < P.K; k = k + 4u) {
        let ak = offs.x + k;
        s = fma(vec4<f32>(f32(A[ak / 4u][ak % 4u])), vec4<f32>(B[(offs.y + k * P.N) / 4u + q]), s);
      }
    }
    red[lid] = s;
    workgroupBarrier();
    if (lid < 64u && n < P.N) {
      let t = red[lid] + red[lid + 64u] + red[lid + 128u] + red[lid + 192u];
      store_one(wid.z, n, t.x);
      store_one(wid.z, n + 1u, t.y);
      store_one(wid.z, n + 2u, t.z);
      store_one(wid.z, n + 3u, t.w);
    }
  }
}
#endif
