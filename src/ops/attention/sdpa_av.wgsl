// SDPA stage 3: out[b, h, s, :] = attn[b, h, s, :] . V[b, h / group] as a tiled batched GEMM
// (S_q x S_kv) . (S_kv x D_v): each 16x16 workgroup owns 64 query rows x 64 value columns (4x4 per
// invocation), staging 64x16 attn tiles and 16x64 V tiles in workgroup memory. Grid
// (ceil(D_v/64), ceil(S_q/64), B*H). Written through the output strides.
// Split-K (few tiles over many keys: a Whisper-size encoder's 1500 keys give 144 workgroups):
// with SPLITK, workgroup z = split * B*H + bh sums keys [split * chunk, (split + 1) * chunk) into
// PART[split][bh][s][n], and the SPLITK_REDUCE entry adds the splits and writes O.
// The float scratch A, V, O (PART with SPLITK) and P come from the generated preamble.
//!include sdpa_params
//!include epilogue_store

#if SPLITK_REDUCE
@compute @workgroup_size(256)
fn av_reduce(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 256u;  // over [bh][s][n]
  let total = P.rows * P.dv;
  if (i >= total) { return; }
  var v = 0.0;
  for (var z = 0u; z < P.splits; z = z + 1u) { v = v + f32(PART[z * total + i]); }
  let n = i % P.dv;
  let row = i / P.dv;
  let s = row % P.sq;
  let bh = row / P.sq;
  let oo = P.o_o + (bh / P.h) * P.o_b + (bh % P.h) * P.o_h + s * P.o_s;
  O[oo + n] = O_T(epilogue(v, oo + n));
}
#else

const BK: u32 = 16u;
const LS: u32 = 17u;
var<workgroup> As: array<vec4<f32>, 272>;  // As[k * LS + m / 4][m % 4] = attn[s0 + m, c0 + k]
var<workgroup> Vs: array<vec4<f32>, 272>;  // Vs[k * LS + n / 4][n % 4] = v[c0 + k, n0 + n]

// Element e (0..1023) of the attn tile at key offset c0: 16 consecutive keys of a row per 16
// invocations; zero outside the live shape.
fn load_a(ao: u32, s0: u32, c0: u32, c_end: u32, e: u32) -> f32 {
  let kk = e % BK;
  let row = e / BK;
  if (c0 + kk < c_end && s0 + row < P.sq) { return f32(A[ao + (s0 + row) * P.skv + c0 + kk]); }
  return 0.0;
}

// Element e of the V tile at key offset c0: 64 consecutive columns of a key row per 64 invocations.
fn load_v(vo: u32, n0: u32, c0: u32, c_end: u32, e: u32) -> f32 {
  let n = e % 64u;
  let kv = e / 64u;
  if (c0 + kv < c_end && n0 + n < P.dv) { return f32(V[vo + (c0 + kv) * P.v_s + n0 + n]); }
  return 0.0;
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
#if SPLITK
  let bh = wid.z % (P.b * P.h);
  let c_begin = (wid.z / (P.b * P.h)) * P.chunk;
  let c_end = min(P.skv, c_begin + P.chunk);
#else
  let bh = wid.z;
  let c_begin = 0u;
  let c_end = P.skv;
#endif
  let h = bh % P.h;
  let b = bh / P.h;
  let s0 = wid.y * 64u;
  let n0 = wid.x * 64u;
  let ao = bh * P.sq * P.skv;
  let vo = P.v_o + b * P.v_b + (h / P.group) * P.v_h;
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  // Register prefetch: the next tiles' global loads are issued before this tile's math.
  var pa = vec4<f32>(0.0);
  var pv = vec4<f32>(0.0);
  for (var t = 0u; t < 4u; t = t + 1u) {
    pa[t] = load_a(ao, s0, c_begin, c_end, li + 256u * t);
    pv[t] = load_v(vo, n0, c_begin, c_end, li + 256u * t);
  }
  for (var c0 = c_begin; c0 < c_end; c0 = c0 + BK) {
    for (var t = 0u; t < 4u; t = t + 1u) {
      let e = li + 256u * t;
      let row = e / BK;
      As[(e % BK) * LS + row / 4u][row % 4u] = pa[t];
      let n = e % 64u;
      Vs[(e / 64u) * LS + n / 4u][n % 4u] = pv[t];
    }
    workgroupBarrier();
    if (c0 + BK < c_end) {
      for (var t = 0u; t < 4u; t = t + 1u) {
        pa[t] = load_a(ao, s0, c0 + BK, c_end, li + 256u * t);
        pv[t] = load_v(vo, n0, c0 + BK, c_end, li + 256u * t);
      }
    }
    for (var k = 0u; k < BK; k = k + 1u) {
      let a = As[k * LS + l.y];
      let bv = Vs[k * LS + l.x];
      acc0 = acc0 + a.x * bv;
      acc1 = acc1 + a.y * bv;
      acc2 = acc2 + a.z * bv;
      acc3 = acc3 + a.w * bv;
    }
    workgroupBarrier();
  }
  var accs = array<vec4<f32>, 4>(acc0, acc1, acc2, acc3);
  for (var i = 0u; i < 4u; i = i + 1u) {
    let s = s0 + l.y * 4u + i;
    if (s >= P.sq) { break; }
#if SPLITK
    let oo = ((wid.z / (P.b * P.h)) * P.rows + bh * P.sq + s) * P.dv;
#else
    let oo = P.o_o + b * P.o_b + h * P.o_h + s * P.o_s;
#endif
    for (var j = 0u; j < 4u; j = j + 1u) {
      let n = n0 + l.x * 4u + j;
#if SPLITK
      if (n < P.dv) { PART[oo + n] = PART_T(accs[i][j]); }
#else
      if (n < P.dv) { O[oo + n] = O_T(epilogue(accs[i][j], oo + n)); }
#endif
    }
  }
}
#endif
