// The uniform of upsample2d.wgsl and upsample2d_vec4.wgsl (//!include upsample2d_params), written
// from upsample.cpp's Params.
struct Params { total: u32, ih: u32, iw: u32, oh: u32, ow: u32, align: u32, scale_h: f32, scale_w: f32 };
