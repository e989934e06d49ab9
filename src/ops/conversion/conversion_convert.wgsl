// Numeric dtype conversion over a flat index (shapes are equal, so no stride math).
// MODE 0: float -> int (truncates toward zero); 1: int (or bool 0/1) -> float; 2: float -> bool
// (x != 0); 3: int -> bool (x != 0); 4: bool (a byte, 0/1) -> int. X_T and Y_T are the storage types of each side.
struct Params { n: u32, p0: u32, p1: u32, p2: u32 };

override MODE: u32 = 0u;
override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= P.n) { return; }
  switch MODE {
    case 0u: { store_Y(i, Y_T(i32(trunc(f32(load_X(i)))))); }
    case 1u: { store_Y(i, Y_T(f32(i32(load_X(i))))); }
    // Bit test of the f32 value, not a float compare: NaN is nonzero (true, like torch) and
    // compilers may fold NaN compares; -0.0 is false.
    case 2u: { store_Y(i, Y_T(select(0u, 1u, (bitcast<u32>(f32(load_X(i))) & 0x7fffffffu) != 0u))); }
    case 3u: { store_Y(i, Y_T(select(0u, 1u, i32(load_X(i)) != 0))); }
    default: { store_Y(i, Y_T(i32(load_X(i)))); }
  }
}
