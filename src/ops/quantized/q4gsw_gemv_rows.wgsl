// The 4-bit linears' GEMV (route "gemv_rows": linear_q4gsw, its multi-output form and, with DQ8CA,
// the 8da4w linears). A workgroup of 256 computes RG * RPT outputs of one row m: KT invocations
// along K times RG row groups, each invocation RPT outputs (weight rows) over the same
// activations, so every weight byte is read once and a row group reads an activation once for
// RPT outputs; one reduction per workgroup, at the end. Flat workgroup index with 2D folding.
// Weights are read a chunk at a time: WORD4 one vec4<u32> (32 weights, row n's bytes whole
// vec4s), else one u32 (8 weights). K and the group size are multiples of 8; GS_CHUNK: the group
// size is a multiple of the chunk's weights, one scale per chunk.
// DQ8CA (8da4w): each activation is quantized as torchao.quantize_affine does, x_q =
// clamp(round(x * (1 / scale)) + zp, -128, 127), and a chunk's sum of (x_q - zp) * q_w is an exact
// integer held in f32 (|sum| <= 32 * 255 * 8 < 2^24) before its group scale multiplies it:
//   out[m, n] = scale_m * sum_g ws[g, n] * sum_{k in g} (x_q[m, k] - zp_m) * q_w[n, k]
// DQ8CA_SHARED (K <= 8192): the workgroup quantizes row m once into workgroup memory, packed as
// dq8ca_quantize_rows.wgsl packs it (block b: word 2b the even activations, 2b + 1 the odd, the
// order of a weight word's low and high nibbles), and a chunk's sum is taken in integers with
// dot4 (dot4I8Packed under DOT4): for a block of eight, with n the nibbles (q_w = n - 8),
//   sum (x_q - zp) * (n - 8) = dot(x_q, n) - 8 * sum x_q - zp * (sum n - 64)
// the same integer as the float form, so the output has the same bits.
// SC_SHARED: the workgroup stages its outputs' scales in workgroup memory first (SC read
// coalesced): otherwise neighbouring invocations, holding neighbouring groups, read words a scale
// row apart.
// PRE (1): an invocation keeps its next step's chunks in flight, requested before it sums the one
// it holds (the first step's before the prologue); PRE 0: each step requests its own, the first
// before the prologue. SC_QUEUE (PRE 1, one scale a chunk, not staged): the scales with them;
// otherwise each is read as it is used.
// XS_SHARED: the workgroup reads row m once (coalesced; under NORM_IN in the loop that sums its
// squares, then normalized in place) into workgroup memory, and every row group (and the 8da4w
// prologue) reads it there.
// DQ8CA_SELF: the workgroup chooses row m's scale and zero point (q8_row_qparams, by subgroup
// under SUBGROUPS); otherwise they are ISC[m] and IZP[m] (torchao.choose_qparams_affine's outputs).
// SWIGLU_OUT: the weight rows are (gate, up) pairs (q4gsw_swiglu_fusion.cpp), and the invocation
// holding rows 2j and 2j + 1 stores O[m, j] = silu(gate) * up, with the operations of the
// elementwise kernels it replaced (SIGMOID_FORM: gate * sigmoid(gate)).
// ROPE_OUT (MULTI: outputs q, k and maybe v): the invocation holding rows 2j and 2j + 1 rotates
// q's and k's pairs by COS and SIN [rows, P.hd / 2] at row P.rope_row0 + m, as rope_rotary.wgsl does.
// NORM_IN (ops/norm/input_norm.h): X is an RMSNorm's input, which every workgroup normalizes as
// it reads (weight NW under NORM_W, eps P.norm_eps), with norm_row.wgsl's sums and operations.
// NORM_REGS (staged, K <= 4096): an invocation's 16 elements and weights are loaded at once into
// registers rather than the weights after the sums (one memory latency less before the loop).
//!include q4gsw_weights
#if DQ8CA
//!include q8_int_math
#endif
#if DQ8CA_SELF
//!include q8_row_qparams
#endif

override RPT: u32 = 2u;  // outputs per invocation, at most 4 (one vec4 of partial sums); even under SWIGLU_OUT / ROPE_OUT
override KT: u32 = 64u;  // invocations along K: 32 or 64
override PRE: u32 = 1u;  // steps of chunks in flight ahead of the one being summed: 0 or 1
var<workgroup> part: array<vec4<f32>, 256>;
#if XS_SHARED
override XS_VEC4: u32 = 512u;  // K / 4 rounded up to 8
var<workgroup> xsh: array<vec4<f32>, XS_VEC4>;
// Where vec4 j of the row sits: an invocation reads 8 consecutive vec4s a chunk and its neighbours
// the next 8, so without the swizzle eight neighbours would read one bank at each step.
fn xs_at(j: u32) -> u32 { return j ^ ((j >> 3u) & 7u); }
#endif
#if SC_SHARED
override SC_WORDS: u32 = 1024u;  // outputs per workgroup x groups covering K
var<workgroup> scs: array<f32, SC_WORDS>;
var<private> sc_n0: u32;      // the workgroup's first output
var<private> sc_groups: u32;  // groups covering K
#endif
// The scale group of chunk c (GS_CHUNK: the chunk lies in one).
fn chunk_group(c: u32) -> u32 { return (8u * CW * c) / P.gs; }
// The scale of chunk c of output n (GS_CHUNK: one a chunk): the queued one under SC_QUEUE.
fn chunk_scale(c: u32, n: u32, queued: f32) -> f32 {
#if SC_QUEUE
  return queued;
#else
  return scale_of(chunk_group(c), n);
#endif
}
// Chunk c of the invocation's rows (from nbase) into the queue (row i at i), with its scale under
// SC_QUEUE; none past the outputs or the chunks.
fn request(wq: ptr<function, array<vec4<u32>, 4>>, sq: ptr<function, array<f32, 4>>, nbase: u32, c: u32, chunks: u32) {
  for (var i = 0u; i < RPT; i = i + 1u) {
    let n = nbase + i;
    if (n < P.n && c < chunks) {
      (*wq)[i] = chunk(n, c);
#if SC_QUEUE
      (*sq)[i] = scale_of(chunk_group(c), n);
#endif
    }
  }
}
// The scale of group g of output n: from the workgroup's staged block (output-major, so
// neighbouring invocations, which hold neighbouring groups, read neighbouring words) or SC.
fn scale_of(g: u32, n: u32) -> f32 {
#if SC_SHARED
  return scs[(n - sc_n0) * sc_groups + g];
#else
  return f32(SC[g * P.srow + n]);
#endif
}
#if DQ8CA
// Four activations quantized as torchao.quantize_affine does: clamp(round(v * inv) + zp, -128, 127).
fn quantize4(v: vec4<f32>, inv: f32, zp: f32) -> vec4<f32> {
  return clamp(round(v * inv) + zp, vec4<f32>(-128.0), vec4<f32>(127.0));
}
#endif
#if DQ8CA_SHARED
override XQ_WORDS: u32 = 512u;  // K / 4
var<workgroup> xq: array<u32, XQ_WORDS>;

// Sum over one block of eight (weight word w, activation words e and o, sx = sum of the block's x_q)
// of (x_q - zp) * q_w, exact in integers.
fn block_dot(w: u32, e: u32, o: u32, sx: i32, zp: i32) -> i32 {
  let lo = w & 0x0f0f0f0fu;
  let hi = (w >> 4u) & 0x0f0f0f0fu;
  return dot4(e, lo) + dot4(o, hi) - 8 * sx - zp * (dot4(lo + hi, 0x01010101u) - 64);
}
#endif
const WG: u32 = 256u;
//!include subgroup_ids
#if NORM_IN
//!include wg_reduce
var<private> rstd_in: f32;  // the row's 1 / sqrt(mean(x^2) + eps)
#endif

// Activations j .. j + 3 of the row at xrow (vec4 index j): x, or under NORM_IN x normalized as
// norm_row.wgsl stores it ((x - 0) * rstd, times the weight).
fn x_vec(xrow: u32, j: u32) -> vec4<f32> {
  var v = vec4<f32>(X[xrow + j]);
#if NORM_IN
  v = (v - vec4<f32>(0.0)) * rstd_in;
#if NORM_W
  v = v * vec4<f32>(NW[j]);
#endif
#endif
  return v;
}

// The same from the staged row where there is one.
fn row_vec(xrow: u32, j: u32) -> vec4<f32> {
#if XS_SHARED
  return xsh[xs_at(j)];
#else
  return x_vec(xrow, j);
#endif
}

#if WORD4
const CW: u32 = 4u;  // words per chunk
fn chunk(n: u32, c: u32) -> vec4<u32> { return W[n * (P.wrow / 16u) + c]; }
#else
const CW: u32 = 1u;
fn chunk(n: u32, c: u32) -> vec4<u32> { return vec4<u32>(W[n * (P.wrow / 4u) + c], 0u, 0u, 0u); }
#endif

// Sum over one word's eight weights (k in natural nibble order) of a[k] * q_w[k], a and b scaled
// by NIB_SCALE (nib4_in_place).
fn word_dot(w: u32, a: vec4<f32>, b: vec4<f32>) -> f32 {
  return dot(a, nib4_in_place(w)) + dot(b, nib4_in_place(w >> 16u));
}

// Output n's value from its sum t: times the row's scale (8da4w; 1 otherwise), plus its bias.
fn output_value(t: f32, n: u32, scale: f32) -> f32 {
  var r = scale * t;
  if (P.has_bias == 1u) { r = r + f32(BIAS[n]); }
  return r;
}

//!include entry_main
  let per = (256u / KT) * RPT;
  let blocks = (P.n + per - 1u) / per;
  let gi = wid.x + wid.y * nwg.x;
  if (gi >= P.m * blocks) { return; }  // uniform: depends on the workgroup only
  let m = gi / blocks;
  let kt = lid % KT;
  let nbase = (gi % blocks) * per + (lid / KT) * RPT;
  let xrow = m * (P.k / 4u);
  let chunks = P.k / (8u * CW);
  // The first step's chunks (and under SC_QUEUE their scales) are requested before the
  // activation parameters are chosen, so those memory latencies overlap.
  var wq: array<vec4<u32>, 4>;
  var sq: array<f32, 4>;
  request(&wq, &sq, nbase, kt, chunks);
#if NORM_REGS
  // K <= 16 WG: this invocation's elements (k = lid + WG i) and their norm weights requested at
  // once into registers, summed in the loop's order, then stored normalized (the same operations).
  var xr: array<f32, 16>;
  var wr: array<f32, 16>;
  for (var i = 0u; i < 16u; i = i + 1u) {
    let k = lid + WG * i;
    if (k < P.k) {
      xr[i] = f32(X[xrow + k / 4u][k % 4u]);
#if NORM_W
      wr[i] = f32(NW[k / 4u][k % 4u]);
#endif
    }
  }
  var ss = 0.0;
  for (var i = 0u; i < 16u; i = i + 1u) {
    if (lid + WG * i < P.k) { ss = ss + xr[i] * xr[i]; }
  }
#elif NORM_IN
  var ss = 0.0;
  for (var k = lid; k < P.k; k = k + WG) {
    let v = f32(X[xrow + k / 4u][k % 4u]);
    ss = ss + v * v;
#if XS_SHARED
    xsh[xs_at(k / 4u)][k % 4u] = v;  // normalized in place below: the row is read once
#endif
  }
#endif
#if NORM_IN
  rstd_in = inverseSqrt(wg_sum(ss, lid) / f32(P.k) + P.norm_eps);
#endif
#if NORM_REGS
  for (var i = 0u; i < 16u; i = i + 1u) {
    let k = lid + WG * i;
    if (k < P.k) {
      var y = (xr[i] - 0.0) * rstd_in;
#if NORM_W
      y = y * wr[i];
#endif
      xsh[xs_at(k / 4u)][k % 4u] = y;
    }
  }
#endif
#if XS_SHARED
#if NORM_REGS
  // Stored normalized above.
#elif NORM_IN
  // This invocation's own elements, with x_vec's operations.
  for (var k = lid; k < P.k; k = k + WG) {
    let j = xs_at(k / 4u);
    var v = (xsh[j][k % 4u] - 0.0) * rstd_in;
#if NORM_W
    v = v * f32(NW[k / 4u][k % 4u]);
#endif
    xsh[j][k % 4u] = v;
  }
#else
  for (var j = lid; j < P.k / 4u; j = j + 256u) { xsh[xs_at(j)] = x_vec(xrow, j); }
#endif
#if DQ8CA
  workgroupBarrier();  // the 8da4w prologue below reads the whole staged row
#endif
#endif
#if DQ8CA
#if DQ8CA_SELF
  var lo = 0.0;  // the row's extremes, zero included (torchao's min_val_neg / max_val_pos)
  var hi = 0.0;
  for (var j = lid; j < P.k / 4u; j = j + 256u) {
    let v = row_vec(xrow, j);
    lo = min(lo, min(min(v.x, v.y), min(v.z, v.w)));
    hi = max(hi, max(max(v.x, v.y), max(v.z, v.w)));
  }
  let q = qparams_of(range_reduce(lo, hi, lid, 256u));
#else
  let q = vec2<f32>(f32(load_ISC(m)), f32(load_IZP(m)));
#endif
  let inv = div_rn(1.0, q.x);
#endif
#if SC_SHARED
  // Read in SC's order (each group's outputs contiguous), stored output-major.
  sc_n0 = (gi % blocks) * per;
  sc_groups = (P.k + P.gs - 1u) / P.gs;
  for (var i = lid; i < per * sc_groups; i = i + 256u) {
    let n = sc_n0 + i % per;
    var v = 0.0;
    if (n < P.n) { v = f32(SC[(i / per) * P.srow + n]); }
    scs[(i % per) * sc_groups + i / per] = v;
  }
#endif
#if DQ8CA_SHARED
  for (var b = lid; b < P.k / 8u; b = b + 256u) {
    let lo8 = vec4<i32>(quantize4(row_vec(xrow, 2u * b), inv, q.y));
    let hi8 = vec4<i32>(quantize4(row_vec(xrow, 2u * b + 1u), inv, q.y));
    xq[2u * b] = pack_i8(vec4<i32>(lo8.x, lo8.z, hi8.x, hi8.z));
    xq[2u * b + 1u] = pack_i8(vec4<i32>(lo8.y, lo8.w, hi8.y, hi8.w));
  }
  let zp = i32(q.y);
#endif
#if XS_SHARED || SC_SHARED || DQ8CA_SHARED
  workgroupBarrier();  // one for everything staged
#endif
  var acc = vec4<f32>(0.0);
  for (var c = kt; c < chunks; c = c + KT) {
    // This step's chunks out of the queue (PRE 0: requested now, but the first step's), then
    // (PRE 1) the next step's requested into it.
    if (PRE == 0u && c != kt) { request(&wq, &sq, nbase, c, chunks); }
    var wc = wq;
    var sc = sq;
    if (PRE == 1u) { request(&wq, &sq, nbase, c + KT, chunks); }
#if DQ8CA_SHARED
    var e: array<u32, 4>;
    var o: array<u32, 4>;
    var sx: array<i32, 4>;
    for (var t = 0u; t < CW; t = t + 1u) {
      e[t] = xq[2u * (CW * c + t)];
      o[t] = xq[2u * (CW * c + t) + 1u];
      sx[t] = dot4(e[t], 0x01010101u) + dot4(o[t], 0x01010101u);
    }
#else
    var xs: array<vec4<f32>, 8>;
    for (var t = 0u; t < 2u * CW; t = t + 1u) {
      var v = row_vec(xrow, 2u * CW * c + t);
#if DQ8CA
      v = quantize4(v, inv, q.y) - q.y;
#endif
      xs[t] = v * NIB_SCALE;
    }
#endif
    for (var i = 0u; i < RPT; i = i + 1u) {
      let n = nbase + i;
      if (n < P.n) {
        let w = wc[i];
#if DQ8CA_SHARED
#if GS_CHUNK
        var d = 0;
        for (var t = 0u; t < CW; t = t + 1u) { d = d + block_dot(w[t], e[t], o[t], sx[t], zp); }
        acc[i] = acc[i] + f32(d) * chunk_scale(c, n, sc[i]);
#else
        for (var t = 0u; t < CW; t = t + 1u) {
          let s = scale_of((8u * (CW * c + t)) / P.gs, n);
          acc[i] = acc[i] + f32(block_dot(w[t], e[t], o[t], sx[t], zp)) * s;
        }
#endif
#elif GS_CHUNK
        var d = 0.0;
        for (var t = 0u; t < CW; t = t + 1u) { d = d + word_dot(w[t], xs[2u * t], xs[2u * t + 1u]); }
        acc[i] = acc[i] + d * chunk_scale(c, n, sc[i]);
#else
        for (var t = 0u; t < CW; t = t + 1u) {
          let s = scale_of((8u * (CW * c + t)) / P.gs, n);
          acc[i] = acc[i] + word_dot(w[t], xs[2u * t], xs[2u * t + 1u]) * s;
        }
#endif
      }
    }
  }
#if SUBGROUPS
  // By subgroup (sgs dividing KT: a row group is whole subgroups), then its KT / sgs partials in order.
  let sub = subgroupAdd(acc);
  if (sg_lane == 0u) { part[lid / sg_size] = sub; }
  workgroupBarrier();
  var tot = vec4<f32>(0.0);
  let first = (lid - kt) / sg_size;
  for (var j = 0u; j < KT / sg_size; j = j + 1u) { tot = tot + part[first + j]; }
#else
  part[lid] = acc;
  workgroupBarrier();
  for (var s = KT / 2u; s > 0u; s = s / 2u) {
    if (kt < s) { part[lid] = part[lid] + part[lid + s]; }
    workgroupBarrier();
  }
  let tot = part[lid - kt];
#endif
#if DQ8CA
  let scale = q.x;  // the row's activation scale
#else
  let scale = 1.0;
#endif
#if SWIGLU_OUT || ROPE_OUT
  // RPT is even and nbase a multiple of it: invocation kt < RPT / 2 holds pair kt (outputs n and
  // n + 1) whole; under ROPE_OUT q's and k's widths are multiples of the head dim.
  let n = nbase + 2u * kt;
  if (kt < RPT / 2u && n + 1u < P.n) {
    var a = output_value(tot[2u * kt], n, scale);
    var b = output_value(tot[2u * kt + 1u], n + 1u, scale);
#if SWIGLU_OUT
    // a is gate j = n / 2, b up j.
#if SIGMOID_FORM
    let s = a * (1.0 / (1.0 + exp(-a)));
#else
    let s = a / (1.0 + exp(-a));
#endif
    O[m * (P.n / 2u) + n / 2u] = O_T(s * b);
#else
    if (n < P.n0 + P.n1) {
      let t = (P.rope_row0 + m) * (P.hd / 2u) + (n % P.hd) / 2u;
      let c = f32(COS[t]);
      let s = f32(SIN[t]);
      let r = vec2<f32>(a * c - b * s, a * s + b * c);
      a = r.x;
      b = r.y;
    }
    store_out(m, n, a);
    store_out(m, n + 1u, b);
#endif
  }
#else
  let n = nbase + kt;
  if (kt < RPT && n < P.n) { store_out(m, n, output_value(tot[kt], n, scale)); }
#endif
}
