// _upsample_bilinear2d_aa on NCHW float tensors, computed in f32 (PyTorch's antialiased bilinear, as in PIL): along each
// axis, output i is centred at scale * (i + 0.5) in the input; the triangle filter's support is
// max(scale, 1) input pixels each side (widened when shrinking, so every input pixel counts);
// taps in [trunc(centre - support + 0.5), trunc(centre + support + 0.5)) clipped to the input,
// weights normalized to sum 1. One invocation per output element.
struct Params { total: u32, ih: u32, iw: u32, oh: u32, ow: u32, max_taps: u32, scale_h: f32, scale_w: f32 };


override WG: u32 = 256u;

struct Taps { lo: i32, count: i32, centre: f32, inv: f32, total: f32 };

fn triangle(x: f32) -> f32 { return max(1.0 - abs(x), 0.0); }

// The taps of output index i along an axis of `size` inputs, and their weight sum.
fn taps(i: u32, size: u32, scale: f32) -> Taps {
  var t: Taps;
  var support = 1.0;
  t.inv = 1.0;
  if (scale >= 1.0) { support = scale; t.inv = 1.0 / scale; }
  t.centre = scale * (f32(i) + 0.5);
  t.lo = max(i32(t.centre - support + 0.5), 0);
  let last = min(i32(t.centre + support + 0.5), i32(size));
  t.count = clamp(last - t.lo, 0, i32(P.max_taps));
  t.total = 0.0;
  for (var j = 0; j < t.count; j = j + 1) {
    t.total = t.total + triangle((f32(j + t.lo) - t.centre + 0.5) * t.inv);
  }
  return t;
}

fn weight(t: Taps, j: i32) -> f32 {
  let w = triangle((f32(j + t.lo) - t.centre + 0.5) * t.inv);
  if (t.total == 0.0) { return w; }
  return w / t.total;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.total) { return; }
  let ox = i % P.ow;
  let oy = (i / P.ow) % P.oh;
  let plane = i / (P.ow * P.oh);
  let tx = taps(ox, P.iw, P.scale_w);
  let ty = taps(oy, P.ih, P.scale_h);
  let base = plane * P.ih * P.iw;
  var acc = 0.0;
  for (var a = 0; a < ty.count; a = a + 1) {
    var row = 0.0;
    let r = base + u32(ty.lo + a) * P.iw;
    for (var b = 0; b < tx.count; b = b + 1) {
      row = row + weight(tx, b) * f32(X[r + u32(tx.lo + b)]);
    }
    acc = acc + weight(ty, a) * row;
  }
  O[i] = O_T(acc);
}
