// Layout-changing copies through mem_strided.wgsl: permute, expand, repeat, flip,
// pixel_shuffle / pixel_unshuffle (affine or modulo gathers) and constant_pad_nd (pad mode).
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "ops/memory/mem_util.h"

namespace etwebgpu::ops {
namespace {

using mem::add_single;
using mem::Strided;

// permute_copy / permute [self, dims, out]: out dim i is input dim dims[i].
void build_permute(OpContext& oc) {
  Graph& g = oc.g;
  mem::require_tensor(oc, oc.arg(0), "self");
  int64_t r = g.tensor(oc.arg(0)).rank();
  std::vector<int64_t> p = mem::list_arg(oc, oc.arg(1), "dims");
  if (static_cast<int64_t>(p.size()) != r)
    oc.fail(ErrorKind::InvalidArgument, "dims " + shape_str(p) + " do not match the input rank " + std::to_string(r));
  std::set<int64_t> seen;
  for (auto& v : p) {
    v = norm_dim(oc, v, r);
    if (!seen.insert(v).second) oc.fail(ErrorKind::InvalidArgument, "repeated dim " + std::to_string(v) + " in permute");
  }
  int32_t x = oc.arg(0), out = oc.out();
  // The plan gave a permute of size-1 dims its input's buffer: the words are already in place.
  if (graph::permute_keeps_order(g.ir(), x, oc.arg(1)) && &g.buffer(x) == &g.buffer(out)) {
    mem::require_same_words(oc, x, out, "self");
    oc.output(out, [x, p](const kernel::Live& l) {
      std::vector<int64_t> od;
      for (int64_t v : p) od.push_back(l.dims(x)[v]);
      return od;
    });
    return;
  }
  add_single(oc, mem::kAffine, "permute", [p](const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    auto cs = contiguous_strides(in);
    Strided st;
    for (int64_t v : p) od.push_back(in[v]), st.src_strides.push_back(cs[v]);
    st.it = od;
    return st;
  });
}

// expand_copy [self, size, implicit, out]: -1 keeps a dim; size-1 dims broadcast (stride 0).
void build_expand(OpContext& oc) {
  mem::LiveInts size(oc, oc.arg(1), "size");
  add_single(oc, mem::kAffine, "expand", [size](const kernel::Live& l, const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    std::vector<int64_t> s = size(l);
    size_t R = s.size(), r = in.size();
    if (R < r)
      throw Error(ErrorKind::InvalidArgument, "the number of sizes " + std::to_string(R) +
                                                  " must be at least the input rank " + std::to_string(r));
    auto cs = contiguous_strides(in);
    Strided st;
    od.assign(R, 0);
    st.src_strides.assign(R, 0);
    for (size_t i = 0; i < R; ++i) {
      bool lead = i < R - r;
      int64_t want = s[i];
      if (lead) {
        if (want < 0) throw Error(ErrorKind::InvalidArgument, "-1 is not allowed for a new leading dim in " + shape_str(s));
        od[i] = want;
        continue;
      }
      int64_t have = in[i - (R - r)];
      if (want == -1) want = have;
      if (want < 0) throw Error(ErrorKind::InvalidArgument, "invalid size " + std::to_string(want));
      if (have != want && have != 1)
        throw Error(ErrorKind::InvalidArgument, "cannot expand " + shape_str(in) + " to " + shape_str(s));
      od[i] = want;
      st.src_strides[i] = have == 1 ? 0 : cs[i - (R - r)];
    }
    st.it = od;
    return st;
  });
}

// repeat [self, repeats, out]: input left-padded with 1s to len(repeats), tiled.
void build_repeat(OpContext& oc) {
  Graph& g = oc.g;
  std::vector<int64_t> reps = mem::list_arg(oc, oc.arg(1), "repeats");
  mem::require_tensor(oc, oc.arg(0), "self");
  if (reps.size() < static_cast<size_t>(g.tensor(oc.arg(0)).rank()))
    oc.fail(ErrorKind::InvalidArgument, "number of repeats " + std::to_string(reps.size()) +
                                            " cannot be smaller than the input rank");
  for (int64_t v : reps)
    if (v < 0) oc.fail(ErrorKind::InvalidArgument, "repeats must be non-negative, got " + shape_str(reps));
  add_single(oc, mem::kModulo, "repeat", [reps](const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    std::vector<int64_t> pin(reps.size() - in.size(), 1);
    pin.insert(pin.end(), in.begin(), in.end());
    Strided st;
    for (size_t i = 0; i < reps.size(); ++i) od.push_back(pin[i] * reps[i]);
    st.it = od;
    st.src_dims = pin;
    st.src_strides = contiguous_strides(pin);
    return st;
  });
}

// flip [self, dims, out]: negative stride from the last element of each flipped dim.
void build_flip(OpContext& oc) {
  Graph& g = oc.g;
  mem::require_tensor(oc, oc.arg(0), "self");
  int64_t r = g.tensor(oc.arg(0)).rank();
  std::set<int64_t> dims;
  for (int64_t v : mem::list_arg(oc, oc.arg(1), "dims"))
    if (!dims.insert(norm_dim(oc, v, r)).second) oc.fail(ErrorKind::InvalidArgument, "dims has duplicates");
  add_single(oc, mem::kAffine, "flip", [dims, r](const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    od = in;
    Strided st;
    st.it = in;
    st.src_strides = contiguous_strides(in);
    if (r == 0) return st;
    for (int64_t d : dims) {
      if (in[d] > 0) st.src_base += (in[d] - 1) * st.src_strides[d];
      st.src_strides[d] = -st.src_strides[d];
    }
    return st;
  });
}

// pixel_shuffle [self, upscale_factor, out]: (*, C*r*r, H, W) -> (*, C, H*r, W*r), iterated as
// (N, C, H, r, W, r) over the output; pixel_unshuffle is the inverse.
void build_pixel(OpContext& oc, bool unshuffle) {
  Graph& g = oc.g;
  mem::require_tensor(oc, oc.arg(0), "self");
  if (g.tensor(oc.arg(0)).rank() < 3)
    oc.fail(ErrorKind::InvalidArgument, "input must have at least 3 dims, got " + shape_str(g.tensor(oc.arg(0)).dims));
  int64_t f = mem::int_arg(oc, oc.arg(1), "factor");
  if (f <= 0) oc.fail(ErrorKind::InvalidArgument, "factor must be positive, got " + std::to_string(f));
  add_single(oc, mem::kAffine, unshuffle ? "pixel_unshuffle" : "pixel_shuffle",
             [f, unshuffle](const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    size_t r = in.size();
    int64_t n = 1;
    for (size_t i = 0; i + 3 < r; ++i) n *= in[i];
    int64_t c = in[r - 3], h = in[r - 2], wd = in[r - 1];
    od.assign(in.begin(), in.end());
    Strided st;
    if (!unshuffle) {
      if (c % (f * f) != 0)
        throw Error(ErrorKind::InvalidArgument, "channels " + std::to_string(c) + " not divisible by upscale_factor^2 = " +
                                                    std::to_string(f * f));
      int64_t co = c / (f * f);
      od[r - 3] = co, od[r - 2] = h * f, od[r - 1] = wd * f;
      // in[n, co*f*f + i*f + j, h, w] -> out[n, co, h*f + i, w*f + j]
      st.it = {n, co, h, f, wd, f};
      st.src_strides = {c * h * wd, f * f * h * wd, wd, f * h * wd, 1, h * wd};
    } else {
      if (h % f != 0 || wd % f != 0)
        throw Error(ErrorKind::InvalidArgument, "height " + std::to_string(h) + " and width " + std::to_string(wd) +
                                                    " must be divisible by downscale_factor " + std::to_string(f));
      int64_t ho = h / f, wo = wd / f;
      od[r - 3] = c * f * f, od[r - 2] = ho, od[r - 1] = wo;
      // out[n, c*f*f + i*f + j, ho, wo] = in[n, c, ho*f + i, wo*f + j]
      st.it = {n, c, f, f, ho, wo};
      st.src_strides = {c * h * wd, h * wd, wd, 1, f * wd, f};
    }
    return st;
  });
}
void build_pixel_shuffle(OpContext& oc) { build_pixel(oc, false); }
void build_pixel_unshuffle(OpContext& oc) { build_pixel(oc, true); }

// constant_pad_nd [self, pad, value, out]: pairs from the last dim backwards; negative crops.
void build_pad(OpContext& oc) {
  Graph& g = oc.g;
  mem::require_tensor(oc, oc.arg(0), "self");
  std::vector<int64_t> pad = mem::list_arg(oc, oc.arg(1), "pad");
  int64_t r = g.tensor(oc.arg(0)).rank();
  if (pad.size() % 2 != 0) oc.fail(ErrorKind::InvalidArgument, "pad length must be even, got " + shape_str(pad));
  if (static_cast<int64_t>(pad.size()) > 2 * r)
    oc.fail(ErrorKind::InvalidArgument, "pad " + shape_str(pad) + " is too long for a rank " + std::to_string(r) + " input");
  double value = g.opt_number(oc.arg(2)).value_or(0.0);
  VkDType ot = g.tensor(oc.out()).dtype;
  const uint32_t fill = scalar_word(oc, value, ot, "pad value");
  add_single(oc, mem::kPad, "pad", [pad, fill](const std::vector<int64_t>& in, std::vector<int64_t>& od) {
    size_t r = in.size();
    od = in;
    Strided st;
    st.lo.assign(r, 0);
    for (size_t k = 0; k < pad.size() / 2; ++k) {
      size_t d = r - 1 - k;
      od[d] = in[d] + pad[2 * k] + pad[2 * k + 1];
      if (od[d] < 0)
        throw Error(ErrorKind::InvalidArgument, "padding " + shape_str(pad) + " of " + shape_str(in) +
                                                    " gives a negative size in dim " + std::to_string(d));
      st.lo[d] = pad[2 * k];
    }
    st.it = od;
    st.src_dims = in;
    st.src_strides = contiguous_strides(in);
    st.fill = fill;
    return st;
  });
}

ETW_REGISTER_OP("aten.permute_copy.default", build_permute);
ETW_REGISTER_OP("aten.permute.default", build_permute);
ETW_REGISTER_OP("aten.expand_copy.default", build_expand);
ETW_REGISTER_OP("aten.repeat.default", build_repeat);
ETW_REGISTER_OP("aten.flip.default", build_flip);
ETW_REGISTER_OP("aten.pixel_shuffle.default", build_pixel_shuffle);
ETW_REGISTER_OP("aten.pixel_unshuffle.default", build_pixel_unshuffle);
ETW_REGISTER_OP("aten.constant_pad_nd.default", build_pad);

}  // namespace
}  // namespace etwebgpu::ops
