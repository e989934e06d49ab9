// 2D pooling over NCHW planes, one invocation per output element.
// MODE 0: avg_pool2d (PyTorch's window/divisor rules), 1: max_pool2d (+ flat h*W+w indices into
// IDX when WRITE_IDX), 2: adaptive avg (start = floor(o*in/out), end = ceil((o+1)*in/out)).
// Values are computed in f32 whatever the storage of X and O.
struct Params {
  total: u32, ih: u32, iw: u32, oh: u32, ow: u32, kh: u32, kw: u32, sh: u32,
  sw: u32, ph: i32, pw: i32, dh: u32, dw: u32, divisor: i32, count_pad: u32, pad: u32,
};

override MODE: u32 = 0u;
override WG: u32 = 256u;

//!include float_bits

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.total) { return; }
  let ox = i % P.ow;
  let oy = (i / P.ow) % P.oh;
  let plane = i / (P.ow * P.oh);
  let base = plane * P.ih * P.iw;
  let H = i32(P.ih);
  let Wd = i32(P.iw);
  if (MODE == 2u) {
    let h0 = (oy * P.ih) / P.oh;
    let h1 = ((oy + 1u) * P.ih + P.oh - 1u) / P.oh;
    let w0 = (ox * P.iw) / P.ow;
    let w1 = ((ox + 1u) * P.iw + P.ow - 1u) / P.ow;
    var s = 0.0;
    for (var y = h0; y < h1; y = y + 1u) {
      for (var x = w0; x < w1; x = x + 1u) { s = s + f32(X[base + y * P.iw + x]); }
    }
    O[i] = O_T(s / f32((h1 - h0) * (w1 - w0)));
    return;
  }
  let hs = i32(oy * P.sh) - P.ph;
  let ws = i32(ox * P.sw) - P.pw;
  if (MODE == 0u) {
    var he = min(hs + i32(P.kh), H + P.ph);
    var we = min(ws + i32(P.kw), Wd + P.pw);
    let pool = (he - hs) * (we - ws);
    let h0 = max(hs, 0);
    let w0 = max(ws, 0);
    he = min(he, H);
    we = min(we, Wd);
    if (h0 >= he || w0 >= we) { O[i] = O_T(0.0); return; }  // window entirely in the padding
    var s = 0.0;
    for (var y = h0; y < he; y = y + 1) {
      for (var x = w0; x < we; x = x + 1) { s = s + f32(X[base + u32(y * Wd + x)]); }
    }
    var div = 0;
    if (P.divisor != 0) { div = P.divisor; } else if (P.count_pad == 1u) { div = pool; } else { div = (he - h0) * (we - w0); }
    O[i] = O_T(s / f32(div));
    return;
  }
  // Max: skip taps outside the input; like PyTorch, `val > max || isnan(val)` (the last NaN wins).
  var h0 = hs;
  while (h0 < 0) { h0 = h0 + i32(P.dh); }
  var w0 = ws;
  while (w0 < 0) { w0 = w0 + i32(P.dw); }
  var m = from_bits(0xff800000u);
  var mi = h0 * Wd + w0;
  for (var ky = 0u; ky < P.kh; ky = ky + 1u) {
    let y = hs + i32(ky * P.dh);
    if (y < 0 || y >= H) { continue; }
    for (var kx = 0u; kx < P.kw; kx = kx + 1u) {
      let x = ws + i32(kx * P.dw);
      if (x < 0 || x >= Wd) { continue; }
      let v = f32(X[base + u32(y * Wd + x)]);
      if (v > m || is_nan(v)) { m = v; mi = y * Wd + x; }
    }
  }
  O[i] = O_T(m);
#if WRITE_IDX
  IDX[i] = IDX_T(mi);
#endif
}
