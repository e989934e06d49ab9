// Requantization shared by the static-int8 convolutions (q8ta_conv.cpp), after q8ta_conv_params.
// int32 accumulator sum x_q * w_q of channel oc -> the output's int8 value (low byte of the u32).
// QF[oc] = (input_scale * weight_scale[oc], bias[oc]), QC[oc] = izp * weight_sum[oc].
fn requant(acc: i32, oc: u32) -> u32 {
  let f = QF[oc];
  var v = f32(acc - QC[oc]) * f.x + f.y;
  if (P.relu == 1u) { v = max(v, 0.0); }
  var y = clamp(round(v * P.inv) + f32(P.ozp), -128.0, 127.0);
  if (P.post == 1u) {
    // dequantize -> clamp -> quantize of that int8 value: q8ta_clamp's float32 operations.
    let h = min(max(f32(i32(y) - P.post_zp_in) * P.post_scale, P.post_lo), P.post_hi);
    y = clamp(round(h * P.post_inv) + f32(P.post_zp), P.post_qmin, P.post_qmax);
  }
  return u32(i32(y)) & 0xffu;
}
