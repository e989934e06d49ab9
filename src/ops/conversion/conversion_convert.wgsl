// Numeric dtype conversion over a flat index (shapes are equal, so no stride math).
// MODE 0: f32 -> i32 (truncates toward zero); 1: i32 (or bool 0/1) -> f32; 2: f32 -> bool (x != 0);
// 3: i32 -> bool (x != 0).
struct Params { n: u32, p0: u32, p1: u32, p2: u32 };

@group(0) @binding(0) var<storage, read> X: array<u32>;
@group(0) @binding(1) var<storage, read_write> Y: array<u32>;
@group(0) @binding(2) var<uniform> P: Params;

override MODE: u32 = 0u;
override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.n) { return; }
  let w = X[i];
  switch MODE {
    case 0u: { Y[i] = bitcast<u32>(i32(trunc(bitcast<f32>(w)))); }
    case 1u: { Y[i] = bitcast<u32>(f32(bitcast<i32>(w))); }
    // Bit test, not a float compare: NaN is nonzero (true, like torch) and compilers may fold NaN compares.
    case 2u: { Y[i] = select(0u, 1u, (w & 0x7fffffffu) != 0u); }
    default: { Y[i] = select(0u, 1u, w != 0u); }
  }
}
