// Uniform and shared helpers of the static-int8 convolutions (q8ta_conv.cpp): shapes, geometry,
// zero points, 1 / output_scale and the activation; requantization of an int32 accumulator.
struct Params {
  b: u32, ic: u32, h: u32, w: u32,
  oc: u32, oh: u32, ow: u32, g: u32,
  icg: u32, ocg: u32, k: u32, kw: u32,
  sh: u32, sw: u32, ph: u32, pw: u32,
  dh: u32, dw: u32, nq: u32, n: u32,
  izp: i32, ozp: i32, inv: f32, relu: u32,
};

// int32 accumulator sum x_q * w_q of channel oc -> the output's int8 value (low byte of the u32).
// QF[oc] = (input_scale * weight_scale[oc], bias[oc]), QC[oc] = izp * weight_sum[oc].
fn requant(acc: i32, oc: u32) -> u32 {
  let f = QF[oc];
  var v = f32(acc - QC[oc]) * f.x + f.y;
  if (P.relu == 1u) { v = max(v, 0.0); }
  let y = clamp(round(v * P.inv) + f32(P.ozp), -128.0, 127.0);
  return u32(i32(y)) & 0xffu;
}
