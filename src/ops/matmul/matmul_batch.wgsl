// Shared by the matmul shaders (//!include matmul_batch): element offsets of batch z in A and B
// (broadcast batch dims have stride 0); needs P: Params.
fn batch_offsets(z: u32) -> vec2<u32> {
  var rem = z;
  var oa = 0u;
  var ob = 0u;
  for (var d = 3; d >= 0; d = d - 1) {
    let n = P.bdims[d];
    let i = rem % n;
    rem = rem / n;
    oa = oa + i * P.astr[d];
    ob = ob + i * P.bstr[d];
  }
  return vec2<u32>(oa, ob);
}
