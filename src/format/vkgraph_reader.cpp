// VH00 delegate blob reader: header (FORMAT.md section 1), verified VK00 VkGraph (section 2) and
// constant resolution through the inline region or the program's named data (section 3.6).
#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "etwebgpu/error.h"
#include "format/escape.h"
#include "format/fb_util.h"
#include "format/ir.h"
#include "vkgraph_generated.h"

namespace etwebgpu::format {
namespace vk = vkgraph;

namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error(ErrorKind::Format, msg); }

template <class T>
T read_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

bool fits(uint64_t off, uint64_t size, uint64_t limit) { return off <= limit && size <= limit - off; }

void check_id(int64_t id, size_t n, const std::string& what) {
  if (id < 0 || static_cast<uint64_t>(id) >= n)
    fail(fmt::format("VkGraph {}: value id {} out of range ({} values)", what, id, n));
}

bool known_dtype(int8_t d) { return d >= 0 && d <= 7; }

}  // namespace

VkGraphIR read_vkgraph(ByteSpan blob, const Program& program) {
  constexpr size_t kHeaderMin = 30;
  if (blob.size() < kHeaderMin)
    fail(fmt::format("VH00 header: blob is {} bytes, smaller than the {}-byte header", blob.size(), kHeaderMin));
  if (std::memcmp(blob.data() + 4, "VH00", 4) != 0) fail("VH00 header: magic at bytes 4..7 is not 'VH00'");
  const uint64_t size = blob.size();
  const uint16_t header_size = read_le<uint16_t>(blob.data() + 8);
  const uint64_t fb_off = read_le<uint32_t>(blob.data() + 10);
  const uint64_t fb_size = read_le<uint32_t>(blob.data() + 14);
  const uint64_t bytes_off = read_le<uint32_t>(blob.data() + 18);
  uint64_t bytes_size = read_le<uint64_t>(blob.data() + 22);
  if (header_size < kHeaderMin) fail(fmt::format("VH00 header: header_size {} is below {}", header_size, kHeaderMin));
  if (fb_off < header_size)
    fail(fmt::format("VH00 header: flatbuffer_offset {} lies inside the header (header_size {})", fb_off, header_size));
  if (fb_size == 0) fail("VH00 header: flatbuffer_size is 0");
  if (!fits(fb_off, fb_size, size))
    fail(fmt::format("VH00 header: flatbuffer_offset {} + size {} exceeds blob size {}", fb_off, fb_size, size));
  if (bytes_off < fb_off + fb_size)
    fail(fmt::format("VH00 header: bytes_offset {} overlaps the flatbuffer [{}, {})", bytes_off, fb_off,
                     fb_off + fb_size));
  if (!fits(bytes_off, bytes_size, size))
    fail(fmt::format("VH00 header: bytes_offset {} + bytes_size {} exceeds blob size {}", bytes_off, bytes_size, size));
  // Like the WebGPU backend: a zero bytes_size with data after bytes_offset means "the rest".
  if (bytes_size == 0) bytes_size = size - bytes_off;
  const ByteSpan raw = blob.subspan(static_cast<size_t>(bytes_off), static_cast<size_t>(bytes_size));

  // The verifier and accessors need the flatbuffer aligned; copy when the blob placement is odd.
  const uint8_t* fbp = blob.data() + fb_off;
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(fbp) % 16 != 0) {
    aligned.resize((fb_size + 7) / 8);
    std::memcpy(aligned.data(), fbp, fb_size);
    fbp = reinterpret_cast<const uint8_t*>(aligned.data());
  }
  if (fb_size < 8 || std::memcmp(fbp + 4, "VK00", 4) != 0)
    fail("VkGraph: flatbuffer identifier is not 'VK00'");
  {
    flatbuffers::Verifier v(fbp, static_cast<size_t>(fb_size));
    if (!vk::VerifyVkGraphBuffer(v)) fail(fmt::format("VkGraph: flatbuffer ({} bytes) failed verification", fb_size));
  }
  const vk::VkGraph* g = vk::GetVkGraph(fbp);

  VkGraphIR ir;
  if (g->version()) ir.version = g->version()->str();

  if (const auto* cs = g->constants()) {
    for (uint32_t i = 0; i < cs->size(); ++i) {
      const vk::VkBytes* c = cs->Get(i);
      const std::string cw = fmt::format("VkGraph constant {}", i);
      if (!c) fail(cw + ": null entry");
      VkConstant k;
      if (c->offset() == std::numeric_limits<uint64_t>::max()) {
        if (!c->named_key()) fail(cw + ": named constant (offset UINT64_MAX) without a named_key");
        k.named_key = c->named_key()->str();
        auto it = program.named_data.find(k.named_key);
        if (it == program.named_data.end())
          fail(fmt::format("{}: named constant '{}' not found in the program's named_data", cw,
                           escape_untrusted(k.named_key)));
        if (c->length() > it->second.size())
          fail(fmt::format("{}: length {} exceeds the named-data segment '{}' of {} bytes", cw, c->length(),
                           escape_untrusted(k.named_key),
                           it->second.size()));
        k.data = it->second;
      } else {
        if (!fits(c->offset(), c->length(), raw.size()))
          fail(fmt::format("{}: inline offset {} + length {} exceeds the constant region of {} bytes", cw, c->offset(),
                           c->length(), raw.size()));
        k.data = raw.subspan(static_cast<size_t>(c->offset()), static_cast<size_t>(c->length()));
      }
      ir.constants.push_back(std::move(k));
    }
  }

  if (const auto* vals = g->values()) {
    ir.values.reserve(vals->size());
    for (uint32_t i = 0; i < vals->size(); ++i) {
      const vk::VkValue* vv = vals->Get(i);
      const std::string vw = fmt::format("VkGraph value {}", i);
      VkValue v;  // a null entry, NONE tag or missing table decodes as Null, like the WebGPU runtime
      const auto tag = vv ? vv->value_type() : vk::GraphTypes::NONE;
      if (static_cast<uint8_t>(tag) > static_cast<uint8_t>(vk::GraphTypes::MAX))
        fail(fmt::format("{}: unknown GraphTypes tag {}", vw, static_cast<int>(tag)));
      if (vv && vv->value()) {
        switch (tag) {
          case vk::GraphTypes::NONE:
          case vk::GraphTypes::Null: break;
          case vk::GraphTypes::Int: v.kind = VkValueKind::Int; v.int_val = vv->value_as_Int()->int_val(); break;
          case vk::GraphTypes::Double:
            v.kind = VkValueKind::Double;
            v.double_val = vv->value_as_Double()->double_val();
            break;
          case vk::GraphTypes::Bool: v.kind = VkValueKind::Bool; v.bool_val = vv->value_as_Bool()->bool_val(); break;
          case vk::GraphTypes::SymInt: v.kind = VkValueKind::SymInt; v.int_val = vv->value_as_SymInt()->value(); break;
          case vk::GraphTypes::String:
            v.kind = VkValueKind::String;
            if (const auto* s = vv->value_as_String()->string_val()) v.str = s->str();
            break;
          case vk::GraphTypes::IntList:
            v.kind = VkValueKind::IntList;
            v.ints = fbutil::copy_vec(vv->value_as_IntList()->items());
            break;
          case vk::GraphTypes::DoubleList:
            v.kind = VkValueKind::DoubleList;
            v.doubles = fbutil::copy_vec(vv->value_as_DoubleList()->items());
            break;
          case vk::GraphTypes::BoolList:
            v.kind = VkValueKind::BoolList;
            if (const auto* it = vv->value_as_BoolList()->items())
              for (auto b : *it) v.bools.push_back(b ? 1 : 0);
            break;
          case vk::GraphTypes::ValueList:
            v.kind = VkValueKind::ValueList;
            if (const auto* it = vv->value_as_ValueList()->items()) v.ids.assign(it->begin(), it->end());
            break;
          case vk::GraphTypes::VkTensor: {
            const vk::VkTensor* t = vv->value_as_VkTensor();
            v.kind = VkValueKind::Tensor;
            const int8_t dt = static_cast<int8_t>(t->datatype());
            if (!known_dtype(dt)) fail(fmt::format("{}: tensor has unknown datatype {}", vw, dt));
            v.tensor.dtype = static_cast<VkDType>(dt);
            uint64_t bytes = vk_dtype_size(v.tensor.dtype);
            if (const auto* d = t->dims()) {
              for (uint32_t k = 0; k < d->size(); ++k) {
                const uint32_t dim = d->Get(k);
                // dims are u32 on disk: a negative dim written by a buggy exporter shows up as a
                // value above INT32_MAX, which no real tensor has.
                if (dim > static_cast<uint32_t>(std::numeric_limits<int32_t>::max()))
                  fail(fmt::format("{}: tensor dim {} is negative ({} as i32)", vw, k, static_cast<int32_t>(dim)));
                if (__builtin_mul_overflow(bytes, uint64_t{dim}, &bytes) ||
                    bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                  fail(fmt::format("{}: tensor dims overflow the byte size at dim {} ({})", vw, k, dim));
                v.tensor.dims.push_back(dim);
              }
            }
            v.tensor.constant_id = t->constant_id();
            v.tensor.mem_obj_id = t->mem_obj_id();
            if (v.tensor.constant_id >= 0) {
              if (static_cast<size_t>(v.tensor.constant_id) >= ir.constants.size())
                fail(fmt::format("{}: constant_id {} out of range ({} constants)", vw, v.tensor.constant_id,
                                 ir.constants.size()));
              const size_t have = ir.constants[static_cast<size_t>(v.tensor.constant_id)].data.size();
              if (bytes > have)
                fail(fmt::format("{}: constant tensor needs {} bytes but constant {} holds {}", vw, bytes,
                                 v.tensor.constant_id, have));
            }
            break;
          }
        }
      }
      ir.values.push_back(std::move(v));
    }
  }
  const size_t nv = ir.values.size();
  for (size_t i = 0; i < nv; ++i)
    for (int32_t id : ir.values[i].ids) check_id(id, nv, fmt::format("ValueList {} item", i));

  if (const auto* ch = g->chain()) {
    for (uint32_t i = 0; i < ch->size(); ++i) {
      const vk::OperatorCall* c = ch->Get(i);
      if (!c) fail(fmt::format("VkGraph op {}: null entry", i));
      VkOpCall op;
      op.node_id = c->node_id();
      if (c->name()) op.name = c->name()->str();
      if (op.name.empty()) fail(fmt::format("VkGraph op {}: missing operator name", i));
      if (c->args()) op.args.assign(c->args()->begin(), c->args()->end());
      for (int32_t id : op.args) check_id(id, nv, fmt::format("op {} ({}) arg", i, op.name));
      ir.chain.push_back(std::move(op));
    }
  }
  if (const auto* in = g->input_ids()) ir.input_ids.assign(in->begin(), in->end());
  if (const auto* out = g->output_ids()) ir.output_ids.assign(out->begin(), out->end());
  for (uint32_t id : ir.input_ids) check_id(id, nv, "input_ids entry");
  for (uint32_t id : ir.output_ids) check_id(id, nv, "output_ids entry");
  return ir;
}

}  // namespace etwebgpu::format
