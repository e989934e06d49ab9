// et_vk.q8ta_add / q8ta_relu and etwebgpu.q8ta_clamp (ops/quantized/quantize.cpp): int8 in, int8
// out (whole words), computed as ExecuTorch's reference does in float32: a = (A - za) * sa,
// b = (B - zb) * sb; ADD: v = a + alpha * b; RELU: v = max(a, 0); CLAMP: v = min(max(a, lo), hi)
// (dequantize -> hardtanh -> quantize); Y = clamp(round_half_even(v * inv_so) + zo, qmin, qmax).
struct Params {
  n: u32,
  za: i32,
  zb: i32,
  zo: i32,
  sa: f32,
  sb: f32,
  inv_so: f32,
  alpha: f32,
  lo: f32,
  hi: f32,
  qmin: f32,
  qmax: f32,
};
override OP: u32 = 0u;  // 0 add, 1 relu, 2 clamp
override WG: u32 = 256u;

fn element(i: u32) -> u32 {
  let a = f32(load_A(i) - P.za) * P.sa;
  var v = max(a, 0.0);
  if (OP == 0u) { v = a + P.alpha * (f32(i32(load_B(i)) - P.zb) * P.sb); }
  if (OP == 2u) { v = min(max(a, P.lo), P.hi); }
  let q = clamp(round(v * P.inv_so) + f32(P.zo), P.qmin, P.qmax);
  return u32(i32(q)) & 0xffu;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = (wid.x + wid.y * nwg.x) * WG + lid;
  let base = t * 4u;
  if (base >= P.n) { return; }
  var word = 0u;
  for (var j = 0u; j < 4u; j++) {
    if (base + j < P.n) { word |= element(base + j) << (8u * j); }
  }
  Y_words[t] = word;
}
