// The entry point of a one-dimensional workgroup of WG invocations whose reductions may run by
// subgroup, included where `fn main` would begin, after `const WG`: it opens main with `wid`
// (workgroup_id), `nwg` (num_workgroups) and `lid` (local_invocation_index) and, under SUBGROUPS,
// sets sg_lane and sg_size from the subgroup builtins. The includer's body and closing brace follow.
//!include subgroup_ids
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32
#if SUBGROUPS
        , @builtin(subgroup_invocation_id) sgi: u32, @builtin(subgroup_size) sgs: u32
#endif
        ) {
#if SUBGROUPS
  sg_lane = sgi;
  sg_size = sgs;
#endif
