#include "kernel/kernel.h"

#include <cctype>
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

namespace {
// Whether WGSL `text` names identifier `id` outside comments.
bool uses_identifier(const std::string& text, const std::string& id) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
      if (i == std::string::npos) return false;
      continue;
    }
    if (text.compare(i, 2, "/*") == 0) {
      i = text.find("*/", i + 2);
      if (i == std::string::npos) return false;
      i += 2;
      continue;
    }
    if (!word(text[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && word(text[j])) ++j;
    if (text.compare(i, j - i, id) == 0 && j - i == id.size()) return true;
    i = j;
  }
  return false;
}
}  // namespace

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
  auto type_defines = [&](const std::string& n, Storage st) {
    f16 = f16 || st == Storage::F16;
    switch (st) {
      case Storage::F16: defs.insert(n + "_F16"); [[fallthrough]];
      case Storage::F32: defs.insert(n + "_FLOAT"); break;
      case Storage::I32: defs.insert(n + "_INT"); break;
      case Storage::U8: defs.insert(n + "_U8"); break;
      case Storage::I8: defs.insert(n + "_INT"); defs.insert(n + "_I8"); break;
    }
  };
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (tensors_[i].id < 0) defs.insert(tensors_[i].name + "_ABSENT");
    type_defines(tensors_[i].name, storage[i]);
  }
  for (const auto& b : buffers_)
    if (b.storage) type_defines(b.name, *b.storage);
  if (f16) {
    pre += "enable f16;\n";
    defs.insert("F16");
  }
  std::string body =
      preprocess(prelude_ + std::string(text_.empty() ? shader_source(shader_) : std::string_view(text_)), defs, shader_);
  if (defs.count("SUBGROUPS")) pre += "enable subgroups;\n";  // the builder checked the device has them
  auto access = [](Access a) { return a == Access::Read ? "read" : "read_write"; };
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const auto& t = tensors_[i];
    const std::string& n = t.name;
    const std::string bind = "@group(0) @binding(" + std::to_string(s.tensor[i]) + ") var<storage, " + access(t.access) + "> ";
    // Element helpers are emitted only for shaders that call them (the others index NAME).
    bool load = uses_identifier(body, "load_" + n), store = uses_identifier(body, "store_" + n);
    if ((load || store) && t.vec4) throw Error(ErrorKind::Internal, shader_ + ": load_/store_" + n + " of a vec4 binding");
    if (store && t.access == Access::Read) throw Error(ErrorKind::Internal, shader_ + ": store_" + n + " of an input");
    pre += "alias " + n + "_T = " + wgsl_scalar(storage[i]) + ";\n";
    if (!is_bytes(storage[i])) {
      pre += bind + n + ": array<" + (t.vec4 ? "vec4<" + n + "_T>" : n + "_T") + ">;\n";
      if (load) pre += "fn load_" + n + "(i: u32) -> " + n + "_T { return " + n + "[i]; }\n";
      if (store) pre += "fn store_" + n + "(i: u32, v: " + n + "_T) { " + n + "[i] = v; }\n";
      continue;
    }
    // Bytes are bound as NAME_words, so a shader that indexes NAME directly would not compile: it
    // is refused here with a message that says why.
    if (t.vec4 || uses_identifier(body, n))
      throw Error(ErrorKind::Unsupported, "kernel '" + shader_ + "' reads " + n + " as 32-bit words; it has no path " +
                                              "for a " + (storage[i] == Storage::I8 ? "int8" : "bool/uint8") +
                                              " tensor (stored as bytes, 4 to a word)");
    // Byte i of `word`, as NAME_T (sign-extended for int8).
    auto byte_of = [sign = storage[i] == Storage::I8](const std::string& word) {
      return sign ? "extractBits(bitcast<i32>(" + word + "), (i & 3u) * 8u, 8u)" : "(" + word + " >> ((i & 3u) * 8u)) & 0xffu";
    };
    const std::string ret = std::string(") -> ") + n + "_T { return ";
    if (t.access == Access::Read) {
      pre += bind + n + "_words: array<u32>;\n";
      if (load) pre += "fn load_" + n + "(i: u32" + ret + byte_of(n + "_words[i >> 2u]") + "; }\n";
      continue;
    }
    // A shader that writes whole words itself (NAME_words[w] = four packed elements, one
    // invocation per word) gets a plain array: it never calls the element helpers.
    if (!load && !store) {
      pre += bind + n + "_words: array<u32>;\n";
      continue;
    }
    // Element stores: neighbouring elements share a word and other invocations may write them in
    // the same dispatch (gathers, scatters and permutes write in any order), so a store replaces
    // its byte with a compare-exchange loop: no other byte is lost and the element holds exactly
    // one writer's value.
    pre += bind + n + "_words: array<atomic<u32>>;\n";
    if (load) pre += "fn load_" + n + "(i: u32" + ret + byte_of("atomicLoad(&" + n + "_words[i >> 2u])") + "; }\n";
    if (store)
      pre += "fn store_" + n + "(i: u32, v: " + n + "_T) {\n  let w = i >> 2u;\n  let sh = (i & 3u) * 8u;\n  var old = atomicLoad(&" + n +
             "_words[w]);\n  loop {\n    let r = atomicCompareExchangeWeak(&" + n + "_words[w], old, (old & ~(0xffu << sh)) | " +
             "((u32(v) & 0xffu) << sh));\n    if (r.exchanged) { break; }\n    old = r.old_value;\n  }\n}\n";
  }
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const auto& b = buffers_[i];
    if (b.name.empty()) continue;
    if (b.storage) pre += "alias " + b.wgsl_type + " = " + wgsl_scalar(*b.storage) + ";\n";
    pre += "@group(0) @binding(" + std::to_string(s.buffer[i]) + ") var<storage, " + access(b.access) + "> " + b.name +
           ": " + (b.array ? "array<" + b.wgsl_type + ">" : b.wgsl_type) + ";\n";
  }
  if (s.uniform != UINT32_MAX)
    pre += "@group(0) @binding(" + std::to_string(s.uniform) + ") var<uniform> " + uniform_name_ + ": " + uniform_type_ + ";\n";
  return pre + body;
}

}  // namespace etwebgpu::kernel
