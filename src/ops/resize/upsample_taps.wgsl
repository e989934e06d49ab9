// Shared by upsample2d and upsample2d_vec4 (//!include upsample_taps): PyTorch's source-index rules,
// in f32 like its CPU kernels (bilinear: area_pixel_compute_source_index + guard_index_and_lambda;
// nearest: floor(dst * scale) clamped, same size and exact x2 special-cased). Needs P: Params.
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
