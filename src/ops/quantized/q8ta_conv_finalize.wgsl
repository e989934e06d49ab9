// Split-K epilogue of q8ta_conv_gemm (SPLIT): one invocation per output word of four NCHW
// elements; each element's int32 sum is taken from ACC [OC, N = B*OH*OW] (and reset to 0 for the
// next run), requantized, and the word written whole.
//!include q8ta_conv_params
//!include q8ta_conv_requant

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wi = (wid.x + wid.y * nwg.x) * WG + lid;
  if (wi >= P.nq) { return; }
  let ohw = P.oh * P.ow;
  let total = P.b * P.oc * ohw;
  var word = 0u;
  for (var j = 0u; j < 4u; j = j + 1u) {
    let e = wi * 4u + j;
    if (e >= total) { break; }
    let bc = e / ohw;
    let p = e - bc * ohw;
    let b = bc / P.oc;
    let oc = bc - b * P.oc;
    let acc = atomicExchange(&ACC[oc * P.n + b * ohw + p], 0);
    word = word | (requant(acc, oc) << (8u * j));
  }
  YQ_words[wi] = word;
}
