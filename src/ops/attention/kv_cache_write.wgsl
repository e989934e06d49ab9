// Writes a chunk's new key rows (and, under PAIR, its value rows) [S, Hkv, D] into the caches at
// row start_pos, as 32-bit words whatever the storage: one dispatch for sdpa_with_kv_cache's two
// caches, where two buffer copies each ended the run's compute pass (about 11 us each in a 1B
// decode step). K / KC (and V / VC) and P come from the generated preamble.
struct Params { words: u32, at: u32, _p0: u32, _p1: u32 };

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 256u;
  if (i >= P.words) { return; }
  KC[P.at + i] = K[i];
#if PAIR
  VC[P.at + i] = V[i];
#endif
}
