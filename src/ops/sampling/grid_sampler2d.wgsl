// grid_sampler_2d on NCHW float tensors (computed in f32; X, G, O and P come from the preamble): out[n, c, h, w] samples input[n, c] at grid[n, h, w] = (x, y) in
// [-1, 1] (x along W). Follows PyTorch's GridSampler.h: unnormalize (align_corners), padding
// (zeros: out-of-range taps read 0; border: clip; reflection: mirror, then clip), then bilinear,
// nearest (round half to even) or bicubic (A = -0.75, padding applied per tap). One invocation
// per output element, flat 2D-folded grid.
struct Params { n: u32, c: u32, h: u32, w: u32, oh: u32, ow: u32, total: u32, pad: u32 };


override INTERP: u32 = 0u;   // 0 bilinear, 1 nearest, 2 bicubic
override PADDING: u32 = 0u;  // 0 zeros, 1 border, 2 reflection
override ALIGN: u32 = 0u;
override WG: u32 = 256u;

fn unnormalize(coord: f32, size: u32) -> f32 {
  let s = f32(size);
  if (ALIGN == 1u) { return (coord + 1.0) / 2.0 * (s - 1.0); }
  return ((coord + 1.0) * s - 1.0) / 2.0;
}

fn clip(coord: f32, size: u32) -> f32 { return min(f32(size) - 1.0, max(coord, 0.0)); }

// Mirrors `coord` into [twice_low / 2, twice_high / 2].
fn mirror(coord: f32, twice_low: f32, twice_high: f32) -> f32 {
  if (twice_low == twice_high) { return 0.0; }
  let mn = twice_low / 2.0;
  let span = (twice_high - twice_low) / 2.0;
  let a = abs(coord - mn);
  let extra = a - floor(a / span) * span;  // fmod of a non-negative value
  let flips = floor(a / span);
  if (flips - 2.0 * floor(flips / 2.0) == 0.0) { return extra + mn; }
  return span - extra + mn;
}

fn apply_padding(coord: f32, size: u32) -> f32 {
  if (PADDING == 1u) { return clip(coord, size); }
  if (PADDING == 2u) {
    var c = coord;
    if (ALIGN == 1u) { c = mirror(c, 0.0, 2.0 * (f32(size) - 1.0)); }
    else { c = mirror(c, -1.0, 2.0 * f32(size) - 1.0); }
    return clip(c, size);
  }
  return coord;
}

// input[base + y * W + x], or 0 outside the plane.
fn tap(base: u32, x: i32, y: i32) -> f32 {
  if (x < 0 || y < 0 || x >= i32(P.w) || y >= i32(P.h)) { return 0.0; }
  return f32(X[base + u32(y) * P.w + u32(x)]);
}

fn cubic1(x: f32) -> f32 { let a = -0.75; return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0; }
fn cubic2(x: f32) -> f32 { let a = -0.75; return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a; }
fn cubic_interp(v: vec4<f32>, t: f32) -> f32 {
  let c = vec4<f32>(cubic2(t + 1.0), cubic1(t), cubic1(1.0 - t), cubic2(2.0 - t));
  return dot(v, c);
}
// A bicubic tap: padding maps the tap coordinate, then out-of-range reads 0.
fn tap_bounded(base: u32, x: f32, y: f32) -> f32 {
  return tap(base, i32(apply_padding(x, P.w)), i32(apply_padding(y, P.h)));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.total) { return; }
  let ow = i % P.ow;
  let oh = (i / P.ow) % P.oh;
  let nc = i / (P.ow * P.oh);
  let n = nc / P.c;
  let gi = ((n * P.oh + oh) * P.ow + ow) * 2u;
  let base = nc * P.h * P.w;
  var res = 0.0;
  if (INTERP == 2u) {
    let ix = unnormalize(f32(G[gi]), P.w);
    let iy = unnormalize(f32(G[gi + 1u]), P.h);
    let x0 = floor(ix);
    let y0 = floor(iy);
    var rows: vec4<f32>;
    for (var j = 0; j < 4; j = j + 1) {
      let y = y0 - 1.0 + f32(j);
      let r = vec4<f32>(tap_bounded(base, x0 - 1.0, y), tap_bounded(base, x0, y), tap_bounded(base, x0 + 1.0, y),
                        tap_bounded(base, x0 + 2.0, y));
      rows[j] = cubic_interp(r, ix - x0);
    }
    res = cubic_interp(rows, iy - y0);
  } else {
    let ix = apply_padding(unnormalize(f32(G[gi]), P.w), P.w);
    let iy = apply_padding(unnormalize(f32(G[gi + 1u]), P.h), P.h);
    if (INTERP == 1u) {
      res = tap(base, i32(round(ix)), i32(round(iy)));  // WGSL round: half to even, like nearbyint
    } else {
      let x0 = floor(ix);
      let y0 = floor(iy);
      let tx = ix - x0;
      let ty = iy - y0;
      let xi = i32(x0);
      let yi = i32(y0);
      res = tap(base, xi, yi) * (1.0 - tx) * (1.0 - ty) + tap(base, xi + 1, yi) * tx * (1.0 - ty) +
            tap(base, xi, yi + 1) * (1.0 - tx) * ty + tap(base, xi + 1, yi + 1) * tx * ty;
    }
  }
  O[i] = O_T(res);
}
