// The small-tile GEMMs' K slices added in workgroup memory (//!include slice_sum after `const S`,
// the slices, and `const NBLK`, the 4x4 blocks of a tile; NBLK * S = the 256 invocations, slice s
// = lid % S of block blk = lid / S): matmul_gemm_small.wgsl and conv_gemm_small.wgsl.
// The upper half of the slices' blocks at each step of the tree sum: [block][slice]; the sums
// [block][row] after it.
var<workgroup> red: array<array<vec4<f32>, 4>, NBLK * S / 2u>;

// Adds acc over the S slices of block blk, the upper half into the lower, S / 2 at a time; then
// red[blk] holds the block's sums for every invocation of the workgroup. Uniform control flow only.
fn slice_sum(acc_in: array<vec4<f32>, 4>, s: u32, blk: u32) {
  var acc = acc_in;
  for (var h = S / 2u; h > 0u; h = h / 2u) {
    if (s >= h && s < 2u * h) { red[blk * (S / 2u) + s - h] = acc; }
    workgroupBarrier();
    if (s < h) {
      let o = red[blk * (S / 2u) + s];
      for (var i = 0u; i < 4u; i = i + 1u) { acc[i] = acc[i] + o[i]; }
    }
    workgroupBarrier();
  }
  if (s == 0u) { red[blk] = acc; }
  workgroupBarrier();
}
