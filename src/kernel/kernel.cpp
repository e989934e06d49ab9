#include "kernel/kernel.h"

#include <set>

#include "etwebgpu/tensor.h"
#include "kernel/wgsl.h"

namespace etwebgpu::kernel {

int64_t Live::numel(int32_t tensor) const { return etwebgpu::numel(dims(tensor)); }

uint32_t u32(int64_t v, const char* what) {
  if (v < 0 || v > static_cast<int64_t>(UINT32_MAX))
    throw Error(ErrorKind::Limit, std::string(what) + " " + std::to_string(v) + " does not fit 32 bits");
  return static_cast<uint32_t>(v);
}

Kernel& Kernel::flat(int32_t tensor, uint64_t per_invocation, uint32_t wg) {
  constant("WG", wg);
  return groups([tensor, per_invocation, wg](const Live& l) {
    return Groups::linear(ceil_div(ceil_div(static_cast<uint64_t>(l.numel(tensor)), per_invocation), wg));
  });
}

Kernel::Slots Kernel::slots() const {
  std::set<uint32_t> taken;
  for (auto& b : buffers_)
    if (b.fixed >= 0) taken.insert(static_cast<uint32_t>(b.fixed));
  Slots s;
  s.tensor.assign(tensors_.size(), UINT32_MAX);
  s.buffer.assign(buffers_.size(), UINT32_MAX);
  for (size_t i = 0; i < buffers_.size(); ++i)
    if (buffers_[i].fixed >= 0) s.buffer[i] = static_cast<uint32_t>(buffers_[i].fixed);
  uint32_t next = 0;
  auto take = [&] {
    while (taken.count(next)) ++next;
    return next++;
  };
  for (auto& o : order_) {
    if (o.index == SIZE_MAX) s.uniform = take();
    else if (o.tensor) s.tensor[o.index] = take();
    else s.buffer[o.index] = take();
  }
  return s;
}

std::string Kernel::source(const std::vector<Storage>& storage) const {
  if (storage.size() != tensors_.size())
    throw Error(ErrorKind::Internal, shader_ + ": storage types for " + std::to_string(storage.size()) + " of " +
                                         std::to_string(tensors_.size()) + " tensors");
  Slots s = slots();
  std::set<std::string> defs(defines_.begin(), defines_.end());
  std::string pre;
  bool f16 = false;
  for (auto st : storage) f16 = f16 || st == Storage::F16;
  if (f16) {
    pre += "enable f16;\n";
    defs.insert("F16");
  }
  auto access = [](Access a) { return a == Access::Read ? "read" : "read_write"; };
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const auto& t = tensors_[i];
    const char* ty = wgsl_scalar(storage[i]);
    pre += "alias " + t.name + "_T = " + ty + ";\n";
    pre += "@group(0) @binding(" + std::to_string(s.tensor[i]) + ") var<storage, " + access(t.access) + "> " + t.name +
           ": array<" + (t.vec4 ? "vec4<" + t.name + "_T>" : t.name + "_T") + ">;\n";
    if (t.id < 0) defs.insert(t.name + "_ABSENT");
    switch (storage[i]) {
      case Storage::F16: defs.insert(t.name + "_F16"); [[fallthrough]];
      case Storage::F32: defs.insert(t.name + "_FLOAT"); break;
      case Storage::I32: defs.insert(t.name + "_INT"); break;
      case Storage::U32: defs.insert(t.name + "_U32"); break;
    }
  }
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const auto& b = buffers_[i];
    if (b.name.empty()) continue;
    pre += "@group(0) @binding(" + std::to_string(s.buffer[i]) + ") var<storage, " + access(b.access) + "> " + b.name +
           ": " + (b.array ? "array<" + b.wgsl_type + ">" : b.wgsl_type) + ";\n";
  }
  if (s.uniform != UINT32_MAX)
    pre += "@group(0) @binding(" + std::to_string(s.uniform) + ") var<uniform> " + uniform_name_ + ": " + uniform_type_ + ";\n";
  return pre + preprocess(text_.empty() ? shader_source(shader_) : std::string_view(text_), defs, shader_);
}

}  // namespace etwebgpu::kernel
