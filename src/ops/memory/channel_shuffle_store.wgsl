// Stores element (n, k, p) of a channel interleave [N, S0 + S1, R] into its piece: O [N, S0, R]
// holds the channels below S0, O1 [N, S1, R] (TWO_PIECES) the rest. Included by
// channel_shuffle.wgsl and, for etwebgpu.conv_shuffle, by conv_params.wgsl.
override S0: u32 = 1u;
override S1: u32 = 0u;

fn shuffle_store(n: u32, k: u32, p: u32, r: u32, v: f32) {
#if TWO_PIECES
  if (k >= S0) {
    O1[(n * S1 + k - S0) * r + p] = O1_T(v);
    return;
  }
#endif
  O[(n * S0 + k) * r + p] = O_T(v);
}
