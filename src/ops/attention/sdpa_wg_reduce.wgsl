// Shared by the sdpa decode kernels (//!include sdpa_wg_reduce, after WG, a const or override): the workgroup's
// max and sum of one value per invocation (a one-dimensional workgroup of WG), returned to every
// invocation. Under SUBGROUPS main sets sg_lane and sg_size from its subgroup builtins: one partial
// per subgroup (subgroup k holds invocations [k * sg_size, (k + 1) * sg_size)), taken in order;
// otherwise a tree in workgroup memory.
var<workgroup> red: array<f32, WG>;
#if SUBGROUPS
var<private> sg_lane: u32;
var<private> sg_size: u32;

fn red_max(x: f32, lid: u32) -> f32 {
  let r = subgroupMax(x);
  if (sg_lane == 0u) { red[lid / sg_size] = r; }
  workgroupBarrier();
  var t = red[0];
  for (var i = 1u; i < WG / sg_size; i = i + 1u) { t = max(t, red[i]); }
  workgroupBarrier();  // red is reused by the next reduction
  return t;
}
fn red_sum(x: f32, lid: u32) -> f32 {
  let r = subgroupAdd(x);
  if (sg_lane == 0u) { red[lid / sg_size] = r; }
  workgroupBarrier();
  var t = red[0];
  for (var i = 1u; i < WG / sg_size; i = i + 1u) { t = t + red[i]; }
  workgroupBarrier();
  return t;
}
#else
fn red_max(x: f32, lid: u32) -> f32 {
  red[lid] = x;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k = k / 2u) {
    if (lid < k) { red[lid] = max(red[lid], red[lid + k]); }
    workgroupBarrier();
  }
  let t = red[0];
  workgroupBarrier();
  return t;
}
fn red_sum(x: f32, lid: u32) -> f32 {
  red[lid] = x;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k = k / 2u) {
    if (lid < k) { red[lid] = red[lid] + red[lid + k]; }
    workgroupBarrier();
  }
  let t = red[0];
  workgroupBarrier();
  return t;
}
#endif
