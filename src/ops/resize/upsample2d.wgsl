// 2D upsampling over NCHW planes, one invocation per output element, in f32 like PyTorch's CPU
// kernels. MODE 0: bilinear (area_pixel_compute_source_index + guard_index_and_lambda),
// 1: nearest (floor(dst * scale) clamped; same size and exact x2 are special-cased like PyTorch).
struct Params { total: u32, ih: u32, iw: u32, oh: u32, ow: u32, align: u32, scale_h: f32, scale_w: f32 };

@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read_write> O: array<f32>;
@group(0) @binding(2) var<uniform> P: Params;

override MODE: u32 = 0u;
override WG: u32 = 256u;

struct Taps { i0: u32, i1: u32, l1: f32 };

fn linear_taps(dst: u32, in_size: u32, out_size: u32, scale: f32) -> Taps {
  if (in_size == out_size) { return Taps(dst, dst, 0.0); }
  var src = 0.0;
  if (P.align == 1u) {
    src = scale * f32(dst);
  } else {
    src = max(scale * (f32(dst) + 0.5) - 0.5, 0.0);
  }
  let i0 = min(u32(floor(src)), in_size - 1u);
  let l1 = clamp(src - f32(i0), 0.0, 1.0);
  let i1 = select(i0, i0 + 1u, i0 < in_size - 1u);
  return Taps(i0, i1, l1);
}

fn nearest(dst: u32, in_size: u32, out_size: u32, scale: f32) -> u32 {
  if (out_size == in_size) { return dst; }
  if (out_size == 2u * in_size) { return dst >> 1u; }
  return min(u32(floor(f32(dst) * scale)), in_size - 1u);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.total) { return; }
  let ox = i % P.ow;
  let oy = (i / P.ow) % P.oh;
  let base = (i / (P.ow * P.oh)) * P.ih * P.iw;
  if (MODE == 1u) {
    O[i] = X[base + nearest(oy, P.ih, P.oh, P.scale_h) * P.iw + nearest(ox, P.iw, P.ow, P.scale_w)];
    return;
  }
  let th = linear_taps(oy, P.ih, P.oh, P.scale_h);
  let tw = linear_taps(ox, P.iw, P.ow, P.scale_w);
  let r0 = base + th.i0 * P.iw;
  let r1 = base + th.i1 * P.iw;
  let top = (1.0 - tw.l1) * X[r0 + tw.i0] + tw.l1 * X[r0 + tw.i1];
  let bot = (1.0 - tw.l1) * X[r1 + tw.i0] + tw.l1 * X[r1 + tw.i1];
  O[i] = (1.0 - th.l1) * top + th.l1 * bot;
}
