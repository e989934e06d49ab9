// Statement block of the large-tile GEMM core (see gemm_core.wgsl), included into the entry point
// after `lid`, `K`, `m0` and `n0` are set: the TM x 8 block of invocation lid over K, then handed
// to store_row. Workgroup-uniform control flow: every invocation reaches every barrier.
  let tx = lid % 16u;
  let ty = lid / 16u;
  var acc: array<vec4<f32>, 16>;  // [row i][col half h] = acc[i * 2 + h]
  let nt = (K + BK - 1u) / BK;
  var r: Tile;
  if (nt > 0u) { r = load_tile(0u); }
  for (var t = 0u; t < nt; t = t + 1u) {
#if NESTED_TILES
    let buf = t % 2u;
#else
    let buf = (t % 2u) * 256u;
#endif
    stage_tile(buf, r);
    workgroupBarrier();
    if (t + 1u < nt) { r = load_tile(t + 1u); }
    for (var k = 0u; k < BK; k = k + 1u) {
#if NESTED_TILES
      let a0 = As[buf][k][ty];
      let b0 = Bs[buf][k][tx];
      let b1 = Bs[buf][k][tx + 16u];
#else
      let a0 = As[buf + k * 32u + ty];
      let b0 = Bs[buf + k * 32u + tx];
      let b1 = Bs[buf + k * 32u + tx + 16u];
#endif
      acc[0] = fma(vec4<f32>(a0.x), b0, acc[0]);
      acc[1] = fma(vec4<f32>(a0.x), b1, acc[1]);
      acc[2] = fma(vec4<f32>(a0.y), b0, acc[2]);
      acc[3] = fma(vec4<f32>(a0.y), b1, acc[3]);
      acc[4] = fma(vec4<f32>(a0.z), b0, acc[4]);
      acc[5] = fma(vec4<f32>(a0.z), b1, acc[5]);
      acc[6] = fma(vec4<f32>(a0.w), b0, acc[6]);
      acc[7] = fma(vec4<f32>(a0.w), b1, acc[7]);
      if (TM == 8u) {
#if NESTED_TILES
        let a1 = As[buf][k][ty + 16u];
#else
        let a1 = As[buf + k * 32u + ty + 16u];
#endif
        acc[8] = fma(vec4<f32>(a1.x), b0, acc[8]);
        acc[9] = fma(vec4<f32>(a1.x), b1, acc[9]);
        acc[10] = fma(vec4<f32>(a1.y), b0, acc[10]);
        acc[11] = fma(vec4<f32>(a1.y), b1, acc[11]);
        acc[12] = fma(vec4<f32>(a1.z), b0, acc[12]);
        acc[13] = fma(vec4<f32>(a1.z), b1, acc[13]);
        acc[14] = fma(vec4<f32>(a1.w), b0, acc[14]);
        acc[15] = fma(vec4<f32>(a1.w), b1, acc[15]);
      }
    }
  }
  let r0 = m0 + ty * 4u;
  let c0 = n0 + tx * 4u;
  store_row(r0, c0, acc[0], acc[1]);
  store_row(r0 + 1u, c0, acc[2], acc[3]);
  store_row(r0 + 2u, c0, acc[4], acc[5]);
  store_row(r0 + 3u, c0, acc[6], acc[7]);
  if (TM == 8u) {
    store_row(r0 + 64u, c0, acc[8], acc[9]);
    store_row(r0 + 65u, c0, acc[10], acc[11]);
    store_row(r0 + 66u, c0, acc[12], acc[13]);
    store_row(r0 + 67u, c0, acc[14], acc[15]);
  }
