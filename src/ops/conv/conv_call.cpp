#include "ops/conv/conv_call.h"

#include "ops/conv/conv_shuffle.h"

namespace etwebgpu::ops {

std::optional<ConvCall> read_conv(const format::VkGraphIR& ir, const format::VkOpCall& c) {
  using format::VkValueKind;
  ConvCall r;
  if (c.name == "aten.convolution.default") r.kind = ConvCall::Kind::Conv, r.own = 9;
  else if (c.name == "et_vk.conv_with_clamp.default") r.kind = ConvCall::Kind::Clamp, r.own = 11;
  else if (c.name == kConvShuffle) r.kind = ConvCall::Kind::Shuffle, r.own = 10;
  else return std::nullopt;
  const size_t n = c.args.size();
  if (n < r.own + 1) return std::nullopt;
  const auto& tr = ir.values[c.args[6]];
  if (tr.kind != VkValueKind::Bool || tr.bool_val) return std::nullopt;
  if (r.kind == ConvCall::Kind::Clamp) r.lo = c.args[9], r.hi = c.args[10];
  if (r.kind == ConvCall::Kind::Shuffle) r.pass = c.args[9];
  // The expression at position i before the output, or nullptr.
  auto expr = [&](size_t i) -> const format::VkExpr* {
    if (i + 1 >= n) return nullptr;
    const auto& v = ir.values[c.args[i]];
    return v.kind == VkValueKind::Expr && v.expr ? v.expr.get() : nullptr;
  };
  size_t at = r.own;
  if (const format::VkExpr* e = expr(at); e && e->on_input) {
    if (e->views.empty() || at + e->views.size() >= n) return std::nullopt;
    r.pro = c.args[at], r.pro_at = at, r.pro_inputs = e->views.size() - 1;
    at += e->views.size();
  }
  if (at + 1 < n) {
    const format::VkExpr* e = expr(at);
    if (!e || e->on_input) return std::nullopt;
    r.ep = c.args[at], r.ep_at = at, r.ep_inputs = n - at - 2;
  }
  return r;
}

}  // namespace etwebgpu::ops
