// cumsum along one dim: one invocation per line (outer, inner), sequential scan of `len` values.
// OUT_F: 1 float output (accumulated in f32), 0 int output (int/bool inputs accumulate in i32, like
// PyTorch's int64 promotion within 32-bit storage).
struct Params { lines: u32, len: u32, inner: u32, pad: u32 };

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
    let w = load_X(idx);
    if (OUT_F == 1u) {
      sf = sf + f32(w);
      store_O(idx, O_T(sf));
    } else {
      si = si + i32(w);
      store_O(idx, O_T(si));
    }
  }
}
