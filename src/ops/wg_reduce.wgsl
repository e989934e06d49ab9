// The workgroup's sum or max of one value per invocation, returned to every invocation
// (//!include wg_reduce after `const WG`, a one-dimensional workgroup of WG invocations): the row
// normalizations, the 4-bit GEMV's input norm and the decode attention kernels. `red` is the
// workgroup memory it (and the includer's other reductions) use. Under SUBGROUPS it reads sg_lane
// and sg_size (subgroup_ids), which entry_main sets.
//!include subgroup_ids
var<workgroup> red: array<f32, WG>;
#if SUBGROUPS

// One partial per subgroup (subgroup k: invocations [k * sgs, (k + 1) * sgs)) taken in order: one
// barrier instead of a tree's.
fn wg_sum(v: f32, lid: u32) -> f32 {
  let r = subgroupAdd(v);
  if (sg_lane == 0u) { red[lid / sg_size] = r; }
  workgroupBarrier();
  var t = red[0];
  for (var i = 1u; i < WG / sg_size; i = i + 1u) { t = t + red[i]; }
  workgroupBarrier();  // red is reused by the next reduction
  return t;
}
fn wg_max(v: f32, lid: u32) -> f32 {
  let r = subgroupMax(v);
  if (sg_lane == 0u) { red[lid / sg_size] = r; }
  workgroupBarrier();
  var t = red[0];
  for (var i = 1u; i < WG / sg_size; i = i + 1u) { t = max(t, red[i]); }
  workgroupBarrier();
  return t;
}
#else
fn wg_sum(v: f32, lid: u32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { red[lid] = red[lid] + red[lid + s]; }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}
fn wg_max(v: f32, lid: u32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) { red[lid] = max(red[lid], red[lid + s]); }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}
#endif
