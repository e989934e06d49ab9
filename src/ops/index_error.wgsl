// Out-of-range index reports (graph/index_check.h), pulled in with `//!include index_error` by
// every kernel that reads indices. The binding number must match IndexCheck::kBinding. The first
// invocation to claim the record writes which site (op), which index and the dimension's size;
// the host reads it back with the outputs and raises PyTorch's error instead of returning data.
struct IndexErrorRecord { flag: atomic<u32>, site: u32, index: i32, size: u32 };
@group(0) @binding(15) var<storage, read_write> INDEX_ERROR: IndexErrorRecord;

const INDEX_INVALID: u32 = 0xffffffffu;

fn report_bad_index(site: u32, index: i32, size: u32) {
  loop {
    let r = atomicCompareExchangeWeak(&INDEX_ERROR.flag, 0u, 1u);
    if (r.exchanged) {
      INDEX_ERROR.site = site;
      INDEX_ERROR.index = index;
      INDEX_ERROR.size = size;
      return;
    }
    if (r.old_value != 0u) { return; }  // another invocation reported first (else a spurious failure: retry)
  }
}

// The index in word `w` (i32 bits) checked against a dimension of `n` entries: valid in [0, n),
// or with `wrap` in [-n, n) and wrapped once. Invalid: reported, INDEX_INVALID returned.
fn checked_index(site: u32, w: u32, n: u32, wrap: bool) -> u32 {
  var v = bitcast<i32>(w);
  if (wrap && v < 0) { v = v + i32(n); }
  if (v < 0 || u32(v) >= n) {
    report_bad_index(site, bitcast<i32>(w), n);
    return INDEX_INVALID;
  }
  return u32(v);
}
