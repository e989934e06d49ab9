// cumsum along one dim: one invocation per line (outer, inner), sequential scan of `len` values.
// IN_DT: 0 f32, 1 i32/bool words; OUT_F: 1 f32 output, 0 i32 output (int/bool inputs accumulate
// in i32, like PyTorch's int64 promotion within 32-bit storage).
struct Params { lines: u32, len: u32, inner: u32, pad: u32 };

@group(0) @binding(0) var<storage, read> X: array<u32>;
@group(0) @binding(1) var<storage, read_write> O: array<u32>;
@group(0) @binding(2) var<uniform> P: Params;

override IN_DT: u32 = 0u;
override OUT_F: u32 = 1u;
override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let l = (wid.x + wid.y * nwg.x) * WG + lid;
  if (l >= P.lines) { return; }
  let base = (l / P.inner) * P.len * P.inner + l % P.inner;
  var sf = 0.0;
  var si = 0;
  for (var k = 0u; k < P.len; k = k + 1u) {
    let idx = base + k * P.inner;
    let w = X[idx];
    if (OUT_F == 1u) {
      if (IN_DT == 0u) { sf = sf + bitcast<f32>(w); } else { sf = sf + f32(bitcast<i32>(w)); }
      O[idx] = bitcast<u32>(sf);
    } else {
      si = si + bitcast<i32>(w);
      O[idx] = bitcast<u32>(si);
    }
  }
}
