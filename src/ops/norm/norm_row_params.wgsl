// The uniform of the row kernels (//!include norm_row_params: norm_row, norm_row_split,
// norm_row_lanes, softmax_row_vec4), written from norm.cpp's RowParams. xoff: the element of X
// where row 0 starts, read by the norm kernels (softmax_row_vec4's is always 0).
struct Params { rows: u32, len: u32, inner: u32, groups: u32, hw: u32, cpg: u32, eps: f32, xoff: u32 };
