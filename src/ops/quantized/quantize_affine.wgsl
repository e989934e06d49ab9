// quantized_decomposed quantize / dequantize, per tensor or per channel (ops/quantized/quantize.cpp).
// QUANTIZE: Y (int8 / uint8, whole words) = clamp(round_half_even(X * inv_scale) + zp, qmin, qmax),
//   one invocation per output word of four elements.
// DEQUANTIZE: Y (float) = (X - zp) * scale, one invocation per element.
// Scale and zero point: the uniform's (per tensor, fixed at load), or S[c] / Z[c] of channel
// c = (i / inner) % channels (per channel, or per tensor from one-element tensors), read at run time.
struct Params {
  n: u32,
  inner: u32,
  channels: u32,
  qmin: i32,
  qmax: i32,
  scale: f32,
  inv_scale: f32,
  zp: i32,
};
override WG: u32 = 256u;

#if S_ABSENT
const QP_TENSORS = false;
#else
const QP_TENSORS = true;
#endif
#if Z_ABSENT
const HAS_Z = false;
#else
const HAS_Z = true;
#endif

// (scale, inverse scale, zero point) of element i.
fn qparams(i: u32) -> vec3<f32> {
  if (!QP_TENSORS) { return vec3<f32>(P.scale, P.inv_scale, f32(P.zp)); }
  let c = (i / P.inner) % P.channels;
  let s = f32(load_S(c));
  var z = 0.0;
  if (HAS_Z) { z = f32(load_Z(c)); }
  return vec3<f32>(s, 1.0 / s, z);
}

#if QUANTIZE
fn quantize(i: u32) -> u32 {
  let q = qparams(i);
  let v = clamp(round(f32(load_X(i)) * q.y) + q.z, f32(P.qmin), f32(P.qmax));
  return u32(i32(v)) & 0xffu;
}
#endif

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = (wid.x + wid.y * nwg.x) * WG + lid;
#if QUANTIZE
  let base = t * 4u;
  if (base >= P.n) { return; }
  var word = 0u;
  for (var j = 0u; j < 4u; j++) {
    if (base + j < P.n) { word |= quantize(base + j) << (8u * j); }
  }
  Y_words[t] = word;
#else
  if (t >= P.n) { return; }
  let q = qparams(t);
  Y[t] = Y_T((f32(load_X(t)) - q.z) * q.x);
#endif
}
