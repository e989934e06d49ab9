// Reductions over any set of dims. The input is viewed as kept dims K (shape P.o, with the input's
// strides) and reduced dims R (shape P.r, with the input's strides); output element o (C order
// over K) reduces the P.r.numel elements at offset(o, K) + offset(r, R).
// Entries: `per_group` = one workgroup per output with a shared-memory tree (long reductions),
// `per_thread` = one invocation per output (short reductions, many outputs).
// OP: 0 sum, 1 mean, 2 amax, 3 amin, 4 argmax, 5 argmin, 6 any, 7 all, 8 prod.
// `var_per_group` / `var_per_thread`: variance (and the mean into M when WRITE_MEAN) of float inputs, two passes.
// CT: compute type 0 f32, 1 i32; elements of any storage are converted on load (X_T) and store (O_T).
//!include tensor_shape
struct Params { o: Shape, r: Shape, inv_count: f32, var_denom: f32, pad1: u32, pad2: u32 };


override OP: u32 = 0u;
override CT: u32 = 0u;
const WG: u32 = 256u;

struct Acc { f: f32, i: i32, k: u32 };

fn offset(idx: u32, s: Shape) -> u32 {
  var rem = idx;
  var off = 0u;
  for (var d = i32(s.rank) - 1; d >= 0; d = d - 1) {
    let n = dim_of(s, u32(d));
    off = off + (rem % n) * stride_of(s, u32(d));
    rem = rem / n;
  }
  return off;
}

//!include float_bits

fn identity() -> Acc {
  let ninf = from_bits(0xff800000u);
  let pinf = from_bits(0x7f800000u);
  switch OP {
    case 2u, 4u: { return Acc(ninf, i32(-2147483647 - 1), 0xffffffffu); }
    case 3u, 5u: { return Acc(pinf, 2147483647, 0xffffffffu); }
    case 7u: { return Acc(0.0, 1, 0u); }
    case 8u: { return Acc(1.0, 1, 0u); }
    default: { return Acc(0.0, 0, 0u); }
  }
}

fn load(w: X_T, k: u32) -> Acc {
  if (OP == 6u || OP == 7u) { return Acc(0.0, select(0, 1, w != X_T(0)), k); }  // NaN is true
  if (CT == 0u) { return Acc(f32(w), 0, k); }
  return Acc(0.0, i32(w), k);
}

// a, b: partial results; for arg ops ties and NaNs go to the smaller index (PyTorch: first
// occurrence; NaN counts as the extreme).
fn combine(a: Acc, b: Acc) -> Acc {
  switch OP {
    case 0u, 1u: { return Acc(a.f + b.f, a.i + b.i, 0u); }
    case 8u: { return Acc(a.f * b.f, a.i * b.i, 0u); }
    case 6u: { return Acc(0.0, a.i | b.i, 0u); }
    case 7u: { return Acc(0.0, a.i & b.i, 0u); }
    case 2u, 3u: {
      if (CT == 1u) { if (OP == 2u) { return Acc(0.0, max(a.i, b.i), 0u); } return Acc(0.0, min(a.i, b.i), 0u); }
      if (is_nan(a.f)) { return a; }
      if (is_nan(b.f)) { return b; }
      if (OP == 2u) { return Acc(max(a.f, b.f), 0, 0u); }
      return Acc(min(a.f, b.f), 0, 0u);
    }
    default: {
      var a_wins = false;
      var tie = false;
      if (CT == 1u) {
        a_wins = select((a.i < b.i), (a.i > b.i), OP == 4u);
        tie = a.i == b.i;
      } else {
        let an = is_nan(a.f);
        let bn = is_nan(b.f);
        if (an || bn) {
          tie = an && bn;
          a_wins = an && !bn;
        } else {
          a_wins = select((a.f < b.f), (a.f > b.f), OP == 4u);
          tie = a.f == b.f;
        }
      }
      if (tie) { a_wins = a.k < b.k; }
      if (a_wins) { return a; }
      return b;
    }
  }
}

fn store(o: u32, a: Acc) {
  switch OP {
    case 4u, 5u: { store_O(o, O_T(i32(a.k))); }
    case 6u, 7u: { store_O(o, O_T(a.i)); }
    case 1u: { store_O(o, O_T(a.f * P.inv_count)); }
    default: {
      if (CT == 0u) { store_O(o, O_T(a.f)); } else { store_O(o, O_T(a.i)); }
    }
  }
}

var<workgroup> sf: array<f32, 256>;
var<workgroup> si: array<i32, 256>;
var<workgroup> sk: array<u32, 256>;

@compute @workgroup_size(256)
fn per_group(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
  let o = wid.x + wid.y * nwg.x;
  if (o >= P.o.numel) { return; }  // workgroup-uniform
  let base = offset(o, P.o);
  var acc = identity();
  for (var r = lid; r < P.r.numel; r = r + WG) { acc = combine(acc, load(load_X(base + offset(r, P.r)), r)); }
  sf[lid] = acc.f;
  si[lid] = acc.i;
  sk[lid] = acc.k;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      let c = combine(Acc(sf[lid], si[lid], sk[lid]), Acc(sf[lid + s], si[lid + s], sk[lid + s]));
      sf[lid] = c.f;
      si[lid] = c.i;
      sk[lid] = c.k;
    }
    workgroupBarrier();
  }
  if (lid == 0u) { store(o, Acc(sf[0], si[0], sk[0])); }
}

@compute @workgroup_size(256)
fn per_thread(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
  let o = (wid.x + wid.y * nwg.x) * WG + lid;
  if (o >= P.o.numel) { return; }
  let base = offset(o, P.o);
  var acc = identity();
  for (var r = 0u; r < P.r.numel; r = r + 1u) { acc = combine(acc, load(load_X(base + offset(r, P.r)), r)); }
  store(o, acc);
}

// Variance: pass 1 sums to the mean, pass 2 sums squared deviations from it. N - correction <= 0
// divides by 0 as PyTorch does (inf, or NaN when every deviation is 0).

fn var_of(sq: f32) -> f32 {
  if (P.var_denom == 0.0) { return select(from_bits(0x7f800000u), from_bits(0x7fc00000u), sq == 0.0 || is_nan(sq)); }
  return sq / P.var_denom;
}

fn store_var(o: u32, mean: f32, sq: f32) {
  store_O(o, O_T(var_of(sq)));
#if WRITE_MEAN
  M[o] = M_T(mean);
#endif
}

// Tree sum of sf[0..WG) into sf[0]; every invocation of the workgroup calls it.
fn group_sum(lid: u32) -> f32 {
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { sf[lid] = sf[lid] + sf[lid + s]; }
    workgroupBarrier();
  }
  let total = sf[0];
  workgroupBarrier();
  return total;
}

@compute @workgroup_size(256)
fn var_per_group(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
  let o = wid.x + wid.y * nwg.x;
  if (o >= P.o.numel) { return; }  // workgroup-uniform
  let base = offset(o, P.o);
  var s = 0.0;
  for (var r = lid; r < P.r.numel; r = r + WG) { s = s + f32(load_X(base + offset(r, P.r))); }
  sf[lid] = s;
  let mean = group_sum(lid) * P.inv_count;
  var q = 0.0;
  for (var r = lid; r < P.r.numel; r = r + WG) {
    let d = f32(load_X(base + offset(r, P.r))) - mean;
    q = q + d * d;
  }
  sf[lid] = q;
  let sq = group_sum(lid);
  if (lid == 0u) { store_var(o, mean, sq); }
}

@compute @workgroup_size(256)
fn var_per_thread(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
  let o = (wid.x + wid.y * nwg.x) * WG + lid;
  if (o >= P.o.numel) { return; }
  let base = offset(o, P.o);
  var s = 0.0;
  for (var r = 0u; r < P.r.numel; r = r + 1u) { s = s + f32(load_X(base + offset(r, P.r))); }
  let mean = s * P.inv_count;
  var q = 0.0;
  for (var r = 0u; r < P.r.numel; r = r + 1u) {
    let d = f32(load_X(base + offset(r, P.r))) - mean;
    q = q + d * d;
  }
  store_var(o, mean, q);
}
