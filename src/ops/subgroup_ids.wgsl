// This invocation's subgroup_invocation_id and subgroup_size under SUBGROUPS, which entry_main
// sets and the subgroup reductions read (wg_reduce, q8_row_qparams, the 4-bit GEMV's sums).
#if SUBGROUPS
var<private> sg_lane: u32;
var<private> sg_size: u32;
#endif
