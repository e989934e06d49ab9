// Shared by the row normalizations (//!include norm_wg_sum): the workgroup's sum of one value per
// invocation (WG invocations, a one-dimensional workgroup), returned to every invocation; `red`
// is the workgroup memory it (and the includer's other reductions) use. Under SUBGROUPS main sets
// sg_lane and sg_size from its subgroup builtins.
var<workgroup> red: array<f32, 256>;
#if SUBGROUPS
var<private> sg_lane: u32;
var<private> sg_size: u32;
#endif

#if SUBGROUPS
// One partial per subgroup (subgroup k: invocations [k * sgs, (k + 1) * sgs)) added in order: one
// barrier instead of eight.
fn wg_sum(v: f32, lid: u32) -> f32 {
  let r = subgroupAdd(v);
  if (sg_lane == 0u) { red[lid / sg_size] = r; }
  workgroupBarrier();
  var t = red[0];
  for (var i = 1u; i < WG / sg_size; i = i + 1u) { t = t + red[i]; }
  workgroupBarrier();  // red is reused by the next reduction
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
#endif

