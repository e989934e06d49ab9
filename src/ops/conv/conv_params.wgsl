// Shared by the conv shaders (included with //!include conv_params): the uniform written by
// conv.cpp (struct Params there), the epilogue every store applies: the clamp, then a fused
// epilogue (ops/epilogue.h) when EPILOGUE is defined, and the store itself (store_out). Every conv kernel binds X, Wt, BIAS
// (absent: a zero dummy), O and P (generated preamble); values are f32 whatever the storage.
struct Params {
  B: u32, IC: u32, H: u32, W: u32,
  OC: u32, OH: u32, OW: u32, KH: u32,
  KW: u32, sh: u32, sw: u32, ph: u32,
  pw: u32, dh: u32, dw: u32, groups: u32,
  icg: u32, ocg: u32, K: u32, N: u32,
  out_min: f32, out_max: f32, total: u32, pad: u32,
  splits: u32, kchunk: u32, spare0: u32, spare1: u32,
#if EPILOGUE
  ep: Epilogue,
#endif
};

override HAS_BIAS: u32 = 0u;
override HAS_CLAMP: u32 = 0u;

#if !SPLITK_REDUCE
// IN_CHANNELS_LAST: X holds N, H, W, C (etwebgpu.conv_channels_last reads the tensor a permute
// to N, C, H, W would have copied).
override IN_CHANNELS_LAST: u32 = 0u;
// Input element i (flat N, C, H, W), of input channel c, as the conv reads it: through the fused
// prologue (ops/conv/conv_prologue.h) when there is one. Padding stays 0: out-of-range reads never
// call it.
// IN_MAPPED: element i is X[IMAP[i]] (etwebgpu.conv_channels_last reading a gathered order).
fn x_in(i: u32, c: u32) -> f32 {
  var j = i;
  if (IN_CHANNELS_LAST == 1u) {
    let hw = P.H * P.W;
    j = ((i / (P.IC * hw)) * hw + i % hw) * P.IC + c;
  }
#if IN_MAPPED
  j = u32(IMAP[i]);
#endif
#if PROLOGUE
  return prologue_terms(f32(X[j]), c);
#else
  return f32(X[j]);
#endif
}
#endif

// Where output element i (flat NCHW; NCL for 1-D) is stored: at i, at its channels-last place
// (etwebgpu.conv_channels_last: the conv writes the permute to N, H, W, C that read it), or
// (OUT_MAPPED) at OMAP[i].
override OUT_CHANNELS_LAST: u32 = 0u;
fn out_at(i: u32) -> u32 {
#if OUT_MAPPED
  return u32(OMAP[i]);
#endif
  if (OUT_CHANNELS_LAST == 0u) { return i; }
  let hw = P.OH * P.OW;
  let t = i / hw;
  return ((t / P.OC) * hw + i % hw) * P.OC + t % P.OC;
}

#if SHUFFLE
//!include channel_shuffle_store
#endif
#if !SPLITK
// Stores output element o's value v: at out_at(o), or (SHUFFLE: etwebgpu.conv_shuffle) as channel
// 2c + 1 of the interleave with the passthrough A, whose element o becomes channel 2c.
fn store_out(o: u32, v: f32) {
#if SHUFFLE
  let r = P.OH * P.OW;
  let t = o / r;
  let c = t % P.OC;
  shuffle_store(t / P.OC, 2u * c + 1u, o % r, r, v);
  shuffle_store(t / P.OC, 2u * c, o % r, r, f32(A[o]));
#else
  O[out_at(o)] = O_T(v);
#endif
}
#endif

// v: output element i's value.
fn epilogue(v: f32, i: u32) -> f32 {
  var r = v;
  // clamp(min, max) as PyTorch: NaN stays NaN, min > max gives max.
  if (HAS_CLAMP == 1u && v == v) { r = min(max(v, P.out_min), P.out_max); }
#if EPILOGUE
  r = epilogue_terms(r, i);
#endif
  return r;
}
