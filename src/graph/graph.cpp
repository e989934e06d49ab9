#include "graph/graph.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "format/escape.h"
#include "graph/rewrite_pipeline.h"
#include "graph/fusion.h"
#include "graph/index_check.h"
#include "graph/op_registry.h"

namespace etwebgpu::graph {

namespace {
constexpr size_t kMaxRank = 8;

std::string value_desc(const format::VkGraphIR& ir, int32_t id) {
  return "value %" + std::to_string(id) + " (" + format::vk_value_kind_name(ir.values[id].kind) + ")";
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31) v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

// f32 -> f16 bits, round to nearest even; overflow gives inf and NaN stays NaN, as PyTorch's .half().
uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, e = (x >> 23) & 0xffu, m = x & 0x7fffffu;
  if (e == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (m ? 0x200u : 0u));
  int32_t he = static_cast<int32_t>(e) - 127 + 15;
  if (he >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (he <= 0) {
    if (he < -10) return static_cast<uint16_t>(sign);
    m |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - he);
    uint32_t hm = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (hm & 1u))) ++hm;
    return static_cast<uint16_t>(sign | hm);
  }
  uint32_t hm = m >> 13, rem = m & 0x1fffu;
  uint32_t h = sign | (static_cast<uint32_t>(he) << 10) | hm;
  if (rem > 0x1000u || (rem == 0x1000u && (hm & 1u))) ++h;  // may carry into the exponent: still right
  return static_cast<uint16_t>(h);
}

// One 32-bit word per element (f32 bits for floats; 0..255 for bytes) -> the bytes storage `s`
// holds, 4-byte padded.
std::vector<uint8_t> store_words(const std::vector<uint32_t>& w, kernel::Storage s) {
  std::vector<uint8_t> b(kernel::storage_bytes(s, w.size()), 0);
  switch (s) {
    case kernel::Storage::F16:
      for (size_t i = 0; i < w.size(); ++i) {
        float f;
        std::memcpy(&f, &w[i], 4);
        uint16_t h = float_to_half(f);
        std::memcpy(b.data() + 2 * i, &h, 2);
      }
      break;
    case kernel::Storage::U8:
    case kernel::Storage::I8:  // a sign-extended int8 word keeps its value in its low byte
      for (size_t i = 0; i < w.size(); ++i) b[i] = static_cast<uint8_t>(w[i]);
      break;
    default:
      if (!w.empty()) std::memcpy(b.data(), w.data(), w.size() * 4);
  }
  return b;
}

// Inverse of store_words for `n` elements.
std::vector<uint32_t> load_words(const std::vector<uint8_t>& b, size_t n, kernel::Storage s) {
  std::vector<uint32_t> w(n);
  switch (s) {
    case kernel::Storage::F16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, b.data() + 2 * i, 2);
        float f = half_to_float(h);
        std::memcpy(&w[i], &f, 4);
      }
      break;
    case kernel::Storage::U8:
      for (size_t i = 0; i < n; ++i) w[i] = b[i];
      break;
    case kernel::Storage::I8:
      for (size_t i = 0; i < n; ++i) w[i] = static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(b[i])));
      break;
    default:
      if (n) std::memcpy(w.data(), b.data(), n * 4);
  }
  return w;
}

// Serialized element bytes -> one 32-bit GPU word each.
std::vector<uint32_t> widen(const uint8_t* p, int64_t n, VkDType t) {
  std::vector<uint32_t> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (t) {
      case VkDType::Float32: case VkDType::Int32: std::memcpy(&w[i], p + 4 * i, 4); break;
      case VkDType::Bool: case VkDType::UInt8: w[i] = p[i]; break;
      case VkDType::Int8: w[i] = static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(p[i]))); break;
      case VkDType::Float16: {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        float f = half_to_float(h);
        std::memcpy(&w[i], &f, 4);
        break;
      }
      case VkDType::Float64: {
        double d;
        std::memcpy(&d, p + 8 * i, 8);
        float f = static_cast<float>(d);
        std::memcpy(&w[i], &f, 4);
        break;
      }
      case VkDType::Int64: {
        int64_t v;
        std::memcpy(&v, p + 8 * i, 8);
        if (v < INT32_MIN || v > INT32_MAX)
          throw Error(ErrorKind::Unsupported, "int64 value " + std::to_string(v) + " does not fit the GPU's int32");
        w[i] = static_cast<uint32_t>(static_cast<int32_t>(v));
        break;
      }
      default: throw Error(ErrorKind::Unsupported, std::string("dtype ") + format::vk_dtype_name(t));
    }
  }
  return w;
}

// `n` serialized elements of dtype `t` written into `b` as storage `s` holds them. The file's
// float32 / int32 words go as they are, without a host copy (a multi-GB model's weights are
// nearly all such); other dtypes are converted a chunk at a time, so host memory stays bounded.
void write_serialized(gpu::Context& ctx, const gpu::Buffer& b, const uint8_t* p, int64_t n, VkDType t, kernel::Storage s) {
  if ((t == VkDType::Float32 && s == kernel::Storage::F32) || (t == VkDType::Int32 && s == kernel::Storage::I32)) {
    if (n) ctx.write(b, 0, p, static_cast<uint64_t>(n) * 4);
    return;
  }
  constexpr int64_t kChunk = int64_t(1) << 22;  // elements: whole 32-bit words in every storage
  const uint64_t in_size = format::vk_dtype_size(t);
  for (int64_t i = 0; i < n; i += kChunk) {
    int64_t m = std::min(kChunk, n - i);
    auto w = store_words(widen(p + static_cast<uint64_t>(i) * in_size, m, t), s);
    ctx.write(b, kernel::storage_bytes(s, static_cast<uint64_t>(i)), w.data(), w.size());
  }
}

// Rethrows `e` with node `n`'s op and id in front, once (a message that begins with the op has it).
[[noreturn]] void rethrow_naming(const Node& n, const Error& e) {
  std::string m = e.what(), kind = std::string(error_kind_name(e.kind())) + " error: ";
  if (m.rfind(kind, 0) == 0) m = m.substr(kind.size());
  if (m.rfind(n.op, 0) == 0) throw e;
  throw Error(e.kind(), n.op + " (node " + std::to_string(n.node_id) + "): " + m);
}
}  // namespace

DType host_dtype_of(VkDType t) {
  switch (t) {
    case VkDType::Float32: case VkDType::Float16: case VkDType::Float64: return DType::Float32;
    case VkDType::Int32: case VkDType::Int64: return DType::Int32;
    case VkDType::Bool: return DType::Bool;
    case VkDType::UInt8: return DType::UInt8;
    case VkDType::Int8: return DType::Int8;
    default: throw Error(ErrorKind::Unsupported, std::string("VkGraph dtype ") + format::vk_dtype_name(t));
  }
}

static bool is_float_vk(VkDType t) { return t == VkDType::Float32 || t == VkDType::Float16 || t == VkDType::Float64; }
static bool is_int_vk(VkDType t) { return t == VkDType::Int32 || t == VkDType::Int64 || t == VkDType::Int8; }
static bool is_byte_vk(VkDType t) { return t == VkDType::Bool || t == VkDType::UInt8; }

std::vector<uint32_t> to_gpu_words(const HostTensor& t, VkDType dst) {
  int64_t n = t.numel();
  if (static_cast<int64_t>(t.data.size()) != n * static_cast<int64_t>(dtype_size(t.dtype)))
    throw Error(ErrorKind::InvalidArgument, "tensor data holds " + std::to_string(t.data.size()) + " bytes, shape " +
                                                shape_str(t.shape) + " of " + dtype_name(t.dtype) + " needs " +
                                                std::to_string(n * dtype_size(t.dtype)));
  std::vector<uint32_t> w(static_cast<size_t>(n));
  const uint8_t* p = t.data.data();
  bool ok = false;
  if (n == 0) {
    ok = true;  // empty tensors: nothing to convert (and no pointer to copy from)
  } else if (is_float_vk(dst) && (t.dtype == DType::Float32)) {
    std::memcpy(w.data(), p, n * 4);
    ok = true;
  } else if (is_float_vk(dst) && t.dtype == DType::Float64) {
    for (int64_t i = 0; i < n; ++i) {
      double d;
      std::memcpy(&d, p + 8 * i, 8);
      float f = static_cast<float>(d);
      std::memcpy(&w[i], &f, 4);
    }
    ok = true;
  } else if (is_int_vk(dst) && t.dtype == DType::Int32) {
    std::memcpy(w.data(), p, n * 4);
    ok = true;
  } else if (is_int_vk(dst) && t.dtype == DType::Int64) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      if (v < INT32_MIN || v > INT32_MAX)
        throw Error(ErrorKind::InvalidArgument, "int64 input value " + std::to_string(v) + " does not fit int32");
      w[i] = static_cast<uint32_t>(static_cast<int32_t>(v));
    }
    ok = true;
  } else if (is_byte_vk(dst) && (t.dtype == DType::Bool || t.dtype == DType::UInt8)) {
    for (int64_t i = 0; i < n; ++i) w[i] = t.dtype == DType::Bool ? (p[i] != 0) : p[i];
    ok = true;
  } else if (dst == VkDType::Int8 && t.dtype == DType::Int8) {
    for (int64_t i = 0; i < n; ++i) w[i] = static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(p[i])));
    ok = true;
  }
  if (!ok)
    throw Error(ErrorKind::InvalidArgument, std::string("a ") + dtype_name(t.dtype) +
                                                " tensor cannot feed a graph tensor of dtype " + format::vk_dtype_name(dst));
  return w;
}

// Whether host tensors of `host` hold exactly the GPU words of a `vk` tensor stored as `s` (f32 or
// i32, 4 bytes an element), so they move between host and device without conversion.
bool same_words(DType host, VkDType vk, kernel::Storage s) {
  return (host == DType::Float32 && s == kernel::Storage::F32 && is_float_vk(vk)) ||
         (host == DType::Int32 && s == kernel::Storage::I32 && is_int_vk(vk));
}

HostTensor from_gpu_words(const std::vector<uint32_t>& w, VkDType src, DType host, std::vector<int64_t> shape) {
  HostTensor t(host, std::move(shape));
  int64_t n = t.numel();
  uint8_t* p = t.data.data();
  bool ok = true;
  if (n == 0) {
    // empty: nothing to copy
  } else if (is_float_vk(src) && host == DType::Float32) std::memcpy(p, w.data(), n * 4);
  else if (is_float_vk(src) && host == DType::Float64)
    for (int64_t i = 0; i < n; ++i) { float f; std::memcpy(&f, &w[i], 4); double d = f; std::memcpy(p + 8 * i, &d, 8); }
  else if (is_int_vk(src) && host == DType::Int32) std::memcpy(p, w.data(), n * 4);
  else if (is_int_vk(src) && host == DType::Int64)
    for (int64_t i = 0; i < n; ++i) { int64_t v = static_cast<int32_t>(w[i]); std::memcpy(p + 8 * i, &v, 8); }
  else if (is_byte_vk(src) && (host == DType::Bool || host == DType::UInt8))
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(host == DType::Bool ? (w[i] != 0) : w[i]);
  else if (src == VkDType::Int8 && host == DType::Int8)
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(static_cast<int8_t>(static_cast<int32_t>(w[i])));
  else ok = false;
  if (!ok)
    throw Error(ErrorKind::InvalidArgument, std::string("graph tensor of dtype ") + format::vk_dtype_name(src) +
                                                " cannot be read as " + dtype_name(host));
  return t;
}

int64_t Tensor::dim(int64_t d) const {
  int64_t r = rank();
  int64_t k = d < 0 ? d + r : d;
  if (k < 0 || k >= r)
    throw Error(ErrorKind::InvalidArgument, "dim " + std::to_string(d) + " out of range for rank " + std::to_string(r));
  return dims[k];
}

int32_t OpContext::arg(size_t i) const {
  if (i >= call.args.size())
    fail(ErrorKind::Format, "expects at least " + std::to_string(i + 1) + " arguments, got " +
                                std::to_string(call.args.size()));
  return call.args[i];
}
void OpContext::fail(ErrorKind k, const std::string& msg) const {
  throw Error(k, call.name + " (node " + std::to_string(call.node_id) + "): " + msg);
}
void OpContext::output(int32_t id, std::function<std::vector<int64_t>(const kernel::Live&)> dims) const {
  g.tensor(id);  // must be a tensor
  node.outputs.emplace_back(id, std::move(dims));
}
void OpContext::output_like(int32_t id, int32_t like) const {
  g.tensor(like);
  output(id, [like](const kernel::Live& l) { return l.dims(like); });
}
void OpContext::prepare(std::function<void(const kernel::Live&)> f) const { node.prepare = std::move(f); }
Step& OpContext::add(const kernel::Kernel& k) const {
  g.add_kernel(node, k);
  return node.steps.back();
}

namespace {
// What kernels' functions read: live dims and integers of the graph.
class GraphLive : public kernel::Live {
 public:
  explicit GraphLive(Graph& g) : g_(g) {}
  const std::vector<int64_t>& dims(int32_t tensor) const override { return g_.tensor(tensor).dims; }
  int64_t integer(int32_t value) const override { return g_.integer(value); }

 private:
  Graph& g_;
};
}  // namespace

Graph::Graph(std::shared_ptr<gpu::Context> ctx, const format::VkGraphIR& ir, GraphOptions opts)
    : ctx_(std::move(ctx)), ir_(ir), opts_(std::move(opts)), live_(std::make_unique<GraphLive>(*this)) {
  auto missing = OpRegistry::global().missing(ir_);
  if (!missing.empty()) {
    std::string m;
    for (auto& s : missing) m += (m.empty() ? "" : ", ") + format::escape_untrusted(s);
    throw Error(ErrorKind::Unsupported, "the graph uses " + std::to_string(missing.size()) +
                                            " operator(s) etwebgpu does not implement: " + m);
  }
  build();
}

Graph::~Graph() = default;

VkValueKind Graph::kind(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= ir_.values.size())
    throw Error(ErrorKind::Format, "value id " + std::to_string(id) + " out of range (" +
                                       std::to_string(ir_.values.size()) + " values)");
  return ir_.values[id].kind;
}

void Graph::build() {
  size_t n = 0;
  // Describes values [n, ir_.values.size()): the file's, then those the rewrites below add.
  auto grow = [this, &n] {
    size_t from = n;
    n = ir_.values.size();
    tensors_.resize(n);
    symints_.resize(n, 0);
    raw_constant_.resize(n, -1);
    for (size_t i = from; i < n; ++i) {
      const auto& v = ir_.values[i];
      if (v.kind == VkValueKind::Tensor) {
        Tensor& t = tensors_[i];
        t.dtype = v.tensor.dtype;
        host_dtype_of(t.dtype);  // rejects unknown dtypes up front
        t.storage = is_float_vk(t.dtype)          ? float_storage()
                    : t.dtype == VkDType::Int8    ? kernel::Storage::I8
                    : is_int_vk(t.dtype)          ? kernel::Storage::I32
                                                  : kernel::Storage::U8;
        if (v.tensor.dims.size() > kMaxRank)
          throw Error(ErrorKind::Limit, "tensor %" + std::to_string(i) + " has rank " + std::to_string(v.tensor.dims.size()) +
                                            "; at most " + std::to_string(kMaxRank) + " is supported");
        t.max_dims = t.dims = v.tensor.dims;
        int64_t elems = numel(t.max_dims);
        if (elems > (int64_t(1) << 40))
          throw Error(ErrorKind::Limit, "tensor %" + std::to_string(i) + " " + shape_str(t.max_dims) + " is too large");
        t.constant_id = v.tensor.constant_id;
        if (t.constant_id >= 0 && static_cast<size_t>(t.constant_id) >= ir_.constants.size())
          throw Error(ErrorKind::Format, "tensor %" + std::to_string(i) + " names constant " + std::to_string(t.constant_id) +
                                             " but the graph has " + std::to_string(ir_.constants.size()));
      } else if (v.kind == VkValueKind::SymInt) {
        symints_[i] = v.int_val;
      }
    }
  };
  grow();
  for (auto id : ir_.input_ids)
    if (kind(static_cast<int32_t>(id)) != VkValueKind::Tensor)
      throw Error(ErrorKind::Format, "graph input " + value_desc(ir_, id) + " is not a tensor");
  for (auto id : ir_.output_ids)
    if (kind(static_cast<int32_t>(id)) != VkValueKind::Tensor)
      throw Error(ErrorKind::Format, "graph output " + value_desc(ir_, id) + " is not a tensor");
  for (const auto& call : ir_.chain) {
    if (call.args.empty())
      throw Error(ErrorKind::Format, format::escape_untrusted(call.name) + ": operator call without arguments");
    for (int32_t a : call.args) kind(a);  // range check
  }
  // Rewrites at load, before any builder and before memory planning, which then sees the
  // rewritten calls' lifetimes: one ordered pass list (graph/rewrite_pipeline.h). After each pass
  // the values it added are described and constant ids refreshed (folded outputs became constants).
  if (opts_.fuse)
    run_rewrite_pipeline(*this, ir_, [&] {
      grow();
      for (size_t i = 0; i < n; ++i)
        if (ir_.values[i].kind == VkValueKind::Tensor) tensors_[i].constant_id = ir_.values[i].tensor.constant_id;
    });
  std::vector<uint64_t> bytes(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (ir_.values[i].kind != VkValueKind::Tensor) continue;
    bytes[i] = tensors_[i].bytes(tensors_[i].max_numel());
    // Constants are checked when their buffer is made (Context::create_buffer): packed 4-bit
    // weights are bound as raw bytes (raw_constant_buffer), a quarter of one word per element.
    if (tensors_[i].constant_id < 0 && bytes[i] > ctx_->info().max_storage_binding)
      throw Error(ErrorKind::Limit, "tensor %" + std::to_string(i) + " " + shape_str(tensors_[i].max_dims) + " needs " +
                                        std::to_string(bytes[i]) + " bytes, above the device's maxStorageBufferBindingSize of " +
                                        std::to_string(ctx_->info().max_storage_binding));
  }
  plan_ = plan_memory(ir_, bytes, {opts_.plan_memory, opts_.plan_memory});
  // Limits are checked for the whole graph before anything is allocated: the plan's buffers and
  // every tensor outside it (constants; tensors no node names, counted though never allocated).
  uint64_t planned = 0;
  auto add_planned = [&planned](uint64_t b) { planned = planned > UINT64_MAX - b ? UINT64_MAX : planned + b; };
  for (auto& b : plan_.buffers) add_planned(b.bytes);
  for (size_t i = 0; i < n; ++i)
    if (ir_.values[i].kind == VkValueKind::Tensor && plan_.buffer_of[i] == MemoryPlan::kNone) add_planned(bytes[i]);
  if (planned > opts_.max_gpu_bytes)
    throw Error(ErrorKind::Limit, "the graph needs " + std::to_string(planned) + " bytes of tensor storage, above the " +
                                      "limit of " + std::to_string(opts_.max_gpu_bytes) + " (LoadOptions::max_gpu_bytes)");
  ctx_->require_memory(planned, "the graph's tensor storage");
  buffers_.resize(plan_.buffers.size());

  // Upload progress: the bytes of each constant, counted at the first node that reads it.
  std::vector<bool> counted(ir_.constants.size(), false);
  auto new_constant_bytes = [&](const format::VkOpCall& call) {
    uint64_t b = 0;
    for (int32_t a : call.args) {
      if (ir_.values[a].kind != VkValueKind::Tensor) continue;
      int32_t c = tensors_[a].constant_id;
      if (c < 0 || counted[c]) continue;
      counted[c] = true;
      b += ir_.constants[c].data.size();
    }
    return b;
  };
  uint64_t upload_total = 0, uploaded = 0;
  if (opts_.progress) {
    for (const auto& call : ir_.chain) upload_total += new_constant_bytes(call);
    counted.assign(counted.size(), false);
    opts_.progress({LoadProgress::Stage::Upload, 0, upload_total});
  }
  nodes_.reserve(ir_.chain.size());
  for (const auto& call : ir_.chain) {
    nodes_.push_back(Node{});
    Node& node = nodes_.back();
    node.op = call.name;
    node.node_id = call.node_id;
    OpContext oc{*this, call, node};
    (*OpRegistry::global().find(call.name))(oc);
    if (opts_.progress) {
      uint64_t b = new_constant_bytes(call);
      uploaded += b;
      if (b) opts_.progress({LoadProgress::Stage::Upload, uploaded, upload_total});
    }
  }
  if (opts_.progress) opts_.progress({LoadProgress::Stage::Upload, upload_total, upload_total});
  for (const auto& st : ir_.state) {
    Tensor& t = tensor(st.value_id);
    uint64_t need = static_cast<uint64_t>(t.max_numel()) * format::vk_dtype_size(t.dtype);
    if (!st.init.empty() && st.init.size() < need)
      throw Error(ErrorKind::Format, "mutable buffer %" + std::to_string(st.value_id) + " " + shape_str(t.max_dims) +
                                         " needs " + std::to_string(need) + " bytes of initial data, the file holds " +
                                         std::to_string(st.init.size()));
  }
  reset_state();
  built_ = true;
  // The first resize makes every kernel active at the serialized shapes ready: their pipelines are
  // compiled concurrently in one batch (or found in the pipeline cache) instead of one after
  // another. Routes other shapes take are made when used.
  if (opts_.progress) {
    for (const auto& nd : nodes_) compile_total_ += nd.kernels.size();
    opts_.progress({LoadProgress::Stage::Compile, 0, compile_total_});
  }
  std::vector<std::pair<Node*, KernelRun*>> first;
  first_activations_ = &first;
  resize();
  // A program with dynamic inputs (an LLM's token count) runs other shapes too, and the routes
  // its kernels take change with them (one token: the decode GEMVs; a 512-token chunk: other GEMM
  // tiles than the bound's). The kernels of every power-of-two size below the bound join the
  // batch, so no later run stops to compile (fp32 Llama-3.2-1B on the H200: the first 512-token
  // chunk took about 0.9 s more than the next).
  if (!opts_.static_shapes) {
    std::vector<std::vector<int64_t>> bound;
    int64_t largest = 1;
    for (uint32_t id : ir_.input_ids) {
      if (!is_tensor(static_cast<int32_t>(id))) continue;
      bound.push_back(tensor(static_cast<int32_t>(id)).dims);
      for (int64_t d : bound.back()) largest = std::max(largest, d);
    }
    for (int64_t p = 1; p < largest; p *= 2) {
      size_t k = 0;
      for (uint32_t id : ir_.input_ids)
        if (is_tensor(static_cast<int32_t>(id))) {
          auto& dims = tensor(static_cast<int32_t>(id)).dims;
          const auto& b = bound[k++];
          for (size_t d = 0; d < dims.size(); ++d) dims[d] = std::min(b[d], p);
        }
      try {
        resize();
      } catch (const Error&) {
        // Shapes this program refuses are never run: nothing to compile for them.
      }
    }
    size_t k = 0;
    for (uint32_t id : ir_.input_ids)
      if (is_tensor(static_cast<int32_t>(id))) tensor(static_cast<int32_t>(id)).dims = bound[k++];
    resize();
    std::set<KernelRun*> seen;
    std::vector<std::pair<Node*, KernelRun*>> unique;
    for (auto& f : first)
      if (seen.insert(f.second).second) unique.push_back(f);
    first = std::move(unique);
  }
  first_activations_ = nullptr;
  if (!first.empty()) instantiate(first);
  if (opts_.progress) opts_.progress({LoadProgress::Stage::Compile, compile_total_, compile_total_});
  compile_total_ = 0;  // later instantiations are not load progress
  opts_.progress = nullptr;  // the caller's callback is not kept beyond the load
}

void Graph::reset_state() {
  for (const auto& st : ir_.state) {
    Tensor& t = tensor(st.value_id);
    t.dims = t.max_dims;
    if (!st.init.empty()) {
      write_serialized(*ctx_, buffer(st.value_id), st.init.data(), t.max_numel(), t.dtype, t.storage);
    } else if (t.max_numel()) {
      std::vector<uint8_t> zeros(t.bytes(t.max_numel()), 0);
      ctx_->write(buffer(st.value_id), 0, zeros.data(), zeros.size());
    }
  }
}

Tensor& Graph::tensor(int32_t id) {
  if (kind(id) != VkValueKind::Tensor)
    throw Error(ErrorKind::Format, "expected a tensor, got " + value_desc(ir_, id));
  return tensors_[id];
}

double Graph::number(int32_t id) const {
  const auto& v = ir_.values[id];
  switch (kind(id)) {
    case VkValueKind::Int: return static_cast<double>(v.int_val);
    case VkValueKind::Double: return v.double_val;
    case VkValueKind::Bool: return v.bool_val ? 1.0 : 0.0;
    case VkValueKind::SymInt: return static_cast<double>(symints_[id]);
    default: throw Error(ErrorKind::Format, "expected a number, got " + value_desc(ir_, id));
  }
}

std::optional<double> Graph::opt_number(int32_t id) const {
  if (kind(id) == VkValueKind::Null) return std::nullopt;
  return number(id);
}

int64_t Graph::integer(int32_t id) const {
  const auto& v = ir_.values[id];
  switch (kind(id)) {
    case VkValueKind::Int: return v.int_val;
    case VkValueKind::SymInt: return symints_[id];
    case VkValueKind::Bool: return v.bool_val ? 1 : 0;
    case VkValueKind::Double: {
      double d = v.double_val;
      // Checked before any cast: the serializer interns 0.0 / 1.0 for integer arguments.
      if (!std::isfinite(d) || d != std::trunc(d) || d < -9.2233720368547758e18 || d >= 9.2233720368547758e18)
        throw Error(ErrorKind::Format, "expected an integer, got Double " + std::to_string(d) + " at %" +
                                           std::to_string(id));
      return static_cast<int64_t>(d);
    }
    default: throw Error(ErrorKind::Format, "expected an integer, got " + value_desc(ir_, id));
  }
}

bool Graph::boolean(int32_t id) const {
  const auto& v = ir_.values[id];
  if (kind(id) == VkValueKind::Bool) return v.bool_val;
  if (kind(id) == VkValueKind::Int && (v.int_val == 0 || v.int_val == 1)) return v.int_val == 1;
  throw Error(ErrorKind::Format, "expected a Bool, got " + value_desc(ir_, id));
}

std::string Graph::string(int32_t id) const {
  if (kind(id) != VkValueKind::String) throw Error(ErrorKind::Format, "expected a String, got " + value_desc(ir_, id));
  return ir_.values[id].str;
}

std::vector<int64_t> Graph::int_list(int32_t id) const {
  const auto& v = ir_.values[id];
  if (kind(id) == VkValueKind::IntList) return v.ints;
  if (kind(id) == VkValueKind::ValueList) {
    std::vector<int64_t> r;
    for (int32_t e : v.ids) r.push_back(integer(e));
    return r;
  }
  throw Error(ErrorKind::Format, "expected an int list, got " + value_desc(ir_, id));
}

std::vector<double> Graph::double_list(int32_t id) const {
  const auto& v = ir_.values[id];
  if (kind(id) == VkValueKind::DoubleList) return v.doubles;
  if (kind(id) == VkValueKind::IntList) return {v.ints.begin(), v.ints.end()};
  throw Error(ErrorKind::Format, "expected a double list, got " + value_desc(ir_, id));
}

std::vector<int32_t> Graph::value_list(int32_t id) const {
  if (kind(id) != VkValueKind::ValueList)
    throw Error(ErrorKind::Format, "expected a value list, got " + value_desc(ir_, id));
  return ir_.values[id].ids;
}

int64_t Graph::symint(int32_t id) const {
  if (kind(id) != VkValueKind::SymInt) return integer(id);
  return symints_[id];
}

void Graph::set_symint(int32_t id, int64_t v) {
  if (kind(id) != VkValueKind::SymInt) throw Error(ErrorKind::Format, "expected a SymInt, got " + value_desc(ir_, id));
  symints_[id] = v;
}

format::ByteSpan Graph::constant_bytes(int32_t id) const {
  const Tensor& t = tensors_[id];
  if (kind(id) != VkValueKind::Tensor || t.constant_id < 0)
    throw Error(ErrorKind::Format, "value %" + std::to_string(id) + " is not a constant tensor");
  auto data = ir_.constants[t.constant_id].data;
  uint64_t need = static_cast<uint64_t>(t.max_numel()) * format::vk_dtype_size(t.dtype);
  if (data.size() < need)
    throw Error(ErrorKind::Format, "constant " + std::to_string(t.constant_id) + " of tensor %" + std::to_string(id) +
                                       " holds " + std::to_string(data.size()) + " bytes, its shape " +
                                       shape_str(t.max_dims) + " needs " + std::to_string(need));
  return data.subspan(0, need);
}

const gpu::Buffer& Graph::buffer(int32_t id) {
  Tensor& t = tensor(id);
  if (t.buffer_index >= 0) return *buffers_[t.buffer_index];
  int bi = plan_.buffer_of[id];
  if (bi != MemoryPlan::kNone) {
    if (!buffers_[bi]) {
      const auto& pb = plan_.buffers[bi];
      std::string label = pb.units > 1 ? "shared" + std::to_string(bi) : "t%" + std::to_string(id);
      buffers_[bi] = std::make_unique<gpu::Buffer>(ctx_->create_buffer(pb.bytes, gpu::BufferKind::Storage, label));
      allocated_bytes_ += buffers_[bi]->size();
      if (opts_.poison_storage && pb.computed) {
        std::vector<uint32_t> nan(buffers_[bi]->size() / 4, 0xFFFFFFFFu);
        ctx_->write(*buffers_[bi], 0, nan.data(), nan.size() * 4);
      }
    }
    t.buffer_index = bi;
    return *buffers_[bi];
  }
  // Constants (and tensors no node names): a buffer of their own.
  auto b = std::make_unique<gpu::Buffer>(ctx_->create_buffer(t.bytes(t.max_numel()), gpu::BufferKind::Storage,
                                                                        "t%" + std::to_string(id)));
  allocated_bytes_ += b->size();
  if (t.constant_id >= 0) {
    write_serialized(*ctx_, *b, constant_bytes(id).data(), t.max_numel(), t.dtype, t.storage);
  }
  t.buffer_index = static_cast<int>(buffers_.size());
  buffers_.push_back(std::move(b));
  return *buffers_[t.buffer_index];
}

const gpu::Buffer& Graph::raw_constant_buffer(int32_t id) {
  auto bytes = constant_bytes(id);
  if (raw_constant_[id] < 0) {
    auto& b = make_scratch(bytes.size(), "raw%" + std::to_string(id));
    ctx_->write(b, 0, bytes.data(), bytes.size());
    raw_constant_[id] = static_cast<int>(owned_.size() - 1);
  }
  return *owned_[raw_constant_[id]];
}

void Graph::upload_constant_into(int32_t dst, int32_t src) {
  Tensor& s = tensor(src);
  Tensor& d = tensor(dst);
  if (d.max_numel() != s.max_numel())
    throw Error(ErrorKind::Format, "prepack: constant %" + std::to_string(src) + " " + shape_str(s.max_dims) +
                                       " does not fit tensor %" + std::to_string(dst) + " " + shape_str(d.max_dims));
  write_serialized(*ctx_, buffer(dst), constant_bytes(src).data(), s.max_numel(), s.dtype, d.storage);
}

gpu::Buffer& Graph::make_uniform(size_t bytes, const std::string& label) {
  owned_.push_back(std::make_unique<gpu::Buffer>(
      ctx_->create_buffer((bytes + 15) & ~size_t(15), gpu::BufferKind::Uniform, label)));
  allocated_bytes_ += owned_.back()->size();
  return *owned_.back();
}

const gpu::Buffer& Graph::shared_scratch(uint64_t bytes) {
  if (built_) throw Error(ErrorKind::Internal, "shared scratch requested after the graph was built");
  if (!shared_scratch_) shared_scratch_ = std::make_unique<gpu::Buffer>();
  if (bytes > shared_scratch_->size()) {
    allocated_bytes_ -= shared_scratch_->size();
    *shared_scratch_ = ctx_->create_buffer((bytes + 3) & ~uint64_t(3), gpu::BufferKind::Storage, "shared scratch");
    allocated_bytes_ += shared_scratch_->size();
  }
  return *shared_scratch_;
}

gpu::Buffer& Graph::make_scratch(uint64_t bytes, const std::string& label) {
  owned_.push_back(std::make_unique<gpu::Buffer>(ctx_->create_buffer(bytes, gpu::BufferKind::Storage, label)));
  allocated_bytes_ += owned_.back()->size();
  return *owned_.back();
}

const gpu::Buffer& Graph::dummy_buffer() {
  if (dummy_ < 0) {
    make_scratch(16, "dummy");
    dummy_ = static_cast<int>(owned_.size() - 1);
    uint32_t z[4] = {0, 0, 0, 0};
    ctx_->write(*owned_[dummy_], 0, z, sizeof z);
  }
  return *owned_[dummy_];
}

IndexCheck& Graph::index_check() {
  if (!index_check_) {
    index_check_ = std::make_unique<IndexCheck>(*ctx_);
    allocated_bytes_ += IndexCheck::kRecordBytes;
  }
  return *index_check_;
}

void Graph::set_input_shape(size_t i, const std::vector<int64_t>& shape) {
  if (i >= ir_.input_ids.size())
    throw Error(ErrorKind::InvalidArgument, "input index " + std::to_string(i) + " out of range (graph has " +
                                                std::to_string(ir_.input_ids.size()) + " inputs)");
  Tensor& t = tensor(static_cast<int32_t>(ir_.input_ids[i]));
  bool fits = shape.size() == t.max_dims.size();
  for (size_t d = 0; fits && d < shape.size(); ++d) fits = shape[d] >= 0 && shape[d] <= t.max_dims[d];
  if (!fits)
    throw Error(ErrorKind::InvalidArgument, "input " + std::to_string(i) + " has shape " + shape_str(shape) +
                                                ", outside the exported bound " + shape_str(t.max_dims));
  t.dims = shape;
  input_bytes_.resize(ir_.input_ids.size());
  input_bytes_[i].clear();
}

void Graph::set_input(size_t i, const HostTensor& h) {
  set_input_shape(i, h.shape);
  int32_t id = static_cast<int32_t>(ir_.input_ids[i]);
  const Tensor& t = tensor(id);
  auto keep_small = [&](const void* p, size_t bytes) {
    if (bytes <= kHostInputBytes) input_bytes_[i].assign(static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + bytes);
  };
  if (same_words(h.dtype, t.dtype, t.storage) && h.data.size() == static_cast<size_t>(h.numel()) * 4) {
    ctx_->write(buffer(id), 0, h.data.data(), h.data.size());  // no host copy: large inputs upload at memcpy speed
    keep_small(h.data.data(), h.data.size());
    return;
  }
  auto w = store_words(to_gpu_words(h, t.dtype), t.storage);
  ctx_->write(buffer(id), 0, w.data(), w.size());
  keep_small(w.data(), w.size());
}

bool Graph::input_bytes(int32_t value_id, uint64_t offset, uint64_t size, void* dst) const {
  for (size_t i = 0; i < ir_.input_ids.size() && i < input_bytes_.size(); ++i) {
    if (static_cast<int32_t>(ir_.input_ids[i]) != value_id) continue;
    const std::vector<uint8_t>& b = input_bytes_[i];
    if (b.empty() || offset > b.size() || size > b.size() - offset) return false;
    std::memcpy(dst, b.data() + offset, size);
    return true;
  }
  return false;
}

void Graph::resize() {
  for (auto& n : nodes_) resize_node(n);
}

void Graph::resize_node(Node& n) {
  try {
    if (n.prepare) n.prepare(*live_);
    for (auto& [id, f] : n.outputs) {
      std::vector<int64_t> d = f(*live_);
      Tensor& t = tensor(id);
      for (int64_t v : d)
        if (v < 0) throw Error(ErrorKind::InvalidArgument, "output size " + shape_str(d) + " has a negative dimension");
      if (numel(d) > t.max_numel())
        throw Error(ErrorKind::InvalidArgument, "output " + shape_str(d) + " exceeds its bound " + shape_str(t.max_dims));
      t.dims = std::move(d);
    }
    for (auto& r : n.kernels) {
      Step& s = n.steps[r.step];
      bool on = !r.when || r.when(*live_);
      kernel::Groups gr = on && r.groups ? r.groups(*live_) : kernel::Groups::none();
      if (on && r.params) {
        r.params(*live_, params_scratch_);
        if (params_scratch_ != r.last) {
          ctx_->write(*r.uniform, 0, params_scratch_.data(), params_scratch_.size());
          r.last = params_scratch_;
        }
      }
      // Inactive kernels get no pipeline, so they are neither recorded nor profiled.
      if (gr.x == 0 || gr.y == 0 || gr.z == 0) {
        s.pipeline = nullptr;
        s.grid = {0, 1, 1};
        continue;
      }
      if (r.pipeline) s.pipeline = r.pipeline;
      else if (first_activations_) first_activations_->push_back({&n, &r});
      else instantiate({{&n, &r}});
      if (gr.flat) {
        // x folds into (x, y); z (a batch) stays.
        s.grid = ctx_->grid(gr.x);
        if (gr.z > ctx_->info().max_workgroups_per_dim)
          throw Error(ErrorKind::Limit, "dispatch grid z " + std::to_string(gr.z) +
                                            " exceeds maxComputeWorkgroupsPerDimension " +
                                            std::to_string(ctx_->info().max_workgroups_per_dim));
        s.grid.z = static_cast<uint32_t>(gr.z);
      } else {
        uint64_t lim = ctx_->info().max_workgroups_per_dim;
        if (gr.x > lim || gr.y > lim || gr.z > lim)
          throw Error(ErrorKind::Limit, "dispatch grid " + std::to_string(gr.x) + "x" + std::to_string(gr.y) + "x" +
                                            std::to_string(gr.z) + " exceeds maxComputeWorkgroupsPerDimension " +
                                            std::to_string(lim));
        s.grid = {static_cast<uint32_t>(gr.x), static_cast<uint32_t>(gr.y), static_cast<uint32_t>(gr.z)};
      }
    }
    if (n.resize) n.resize();
  } catch (const Error& e) {
    rethrow_naming(n, e);
  }
}

void Graph::add_kernel(Node& n, const kernel::Kernel& k) {
  if (!k.groups_fn()) throw Error(ErrorKind::Internal, n.op + ": kernel " + k.shader() + " declares no dispatch size");
  std::vector<kernel::Storage> storage;
  for (auto& t : k.tensors()) {
    if (t.id < 0 && t.access == kernel::Access::ReadWrite)
      throw Error(ErrorKind::Internal, n.op + ": kernel " + k.shader() + " output " + t.name + " has no tensor");
    storage.push_back(t.id < 0 ? kernel::Storage::F32 : tensor(t.id).storage);
  }
  std::string wgsl;
  try {
    wgsl = k.source(storage);
  } catch (const Error& e) {
    rethrow_naming(n, e);
  }
  kernel::Kernel::Slots slots = k.slots();
  KernelRun r;
  r.wgsl = std::move(wgsl);
  r.entry = k.entry();
  r.label = k.shader();
  r.constants = k.constants();
  for (size_t i = 0; i < k.tensors().size(); ++i) {
    int32_t id = k.tensors()[i].id;
    r.bindings.push_back({slots.tensor[i], id < 0 ? &dummy_buffer() : &buffer(id)});
  }
  for (size_t i = 0; i < k.buffers().size(); ++i) r.bindings.push_back({slots.buffer[i], k.buffers()[i].buffer});
  if (k.uniform_bytes()) {
    r.uniform = &make_uniform(k.uniform_bytes(), n.op);
    r.bindings.push_back({slots.uniform, r.uniform});
  }
  r.params = k.params_fn();
  r.groups = k.groups_fn();
  r.when = k.when_fn();
  Step st;
  st.variant = k.variant_name();
  st.dispatch = true;
  n.steps.push_back(std::move(st));
  r.step = n.steps.size() - 1;
  n.kernels.push_back(std::move(r));
}

void Graph::instantiate(const std::vector<std::pair<Node*, KernelRun*>>& runs) {
  std::vector<gpu::Context::PipelineSource> sources;
  for (auto& [n, r] : runs) sources.push_back({r->wgsl, r->entry, &r->constants, r->label});
  std::vector<const gpu::Pipeline*> pipelines;
  size_t failed = 0;
  try {
    pipelines = ctx_->pipelines_from_sources(sources, &failed);
  } catch (const Error& e) {
    rethrow_naming(*runs[failed].first, e);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    auto& [n, r] = runs[i];
    Step& s = n->steps[r->step];
    r->pipeline = s.pipeline = pipelines[i];
    if (compile_total_ && opts_.progress) opts_.progress({LoadProgress::Stage::Compile, ++compiled_, compile_total_});
    try {
      s.bind_group = ctx_->bind_group(*r->pipeline, r->bindings);
    } catch (const Error& e) {
      rethrow_naming(*n, e);
    }
    r->wgsl = std::string();  // the pipeline cache holds what is needed from here on
    r->bindings.clear();
  }
}

void Graph::record_node(const Node& n, std::vector<gpu::Command>& cmds, std::vector<std::string>* labels) {
  for (auto& s : n.steps) {
    // Steps a resize hook turned off this run (zero grid / zero bytes) are not recorded.
    if (s.pipeline && s.grid.x && s.grid.y && s.grid.z) cmds.push_back(ctx_->dispatch(*s.pipeline, s.bind_group, s.grid));
    else if (s.copy_src && s.copy_dst && s.copy_size) cmds.push_back(gpu::Context::copy(*s.copy_src, s.copy_src_offset, *s.copy_dst,
                                                                       s.copy_dst_offset, s.copy_size));
    else continue;
    if (labels) labels->push_back(n.op + (s.variant.empty() ? "" : "|" + s.variant));
  }
}

void Graph::record(std::vector<gpu::Command>& cmds, std::vector<std::string>* labels) {
  for (auto& n : nodes_) record_node(n, cmds, labels);
}

void Graph::resize_and_record(std::vector<gpu::Command>& cmds, std::vector<uint64_t>* durations,
                              std::vector<std::string>* labels) {
  bool sync = std::any_of(nodes_.begin(), nodes_.end(), [](const Node& n) { return bool(n.readback); });
  if (!sync) {
    resize();
    record(cmds, labels);
    return;
  }
  for (auto& n : nodes_) {
    resize_node(n);
    record_node(n, cmds, labels);
    if (!n.readback) continue;
    uint32_t word = 0;
    std::vector<uint64_t> d;
    ctx_->submit(cmds, durations ? &d : nullptr, {{n.readback_src, 0, 4, &word}});
    if (durations) durations->insert(durations->end(), d.begin(), d.end());
    cmds.clear();
    n.readback(word);
  }
}

void Graph::execute_and_read(const std::vector<DType>& dtypes, std::vector<HostTensor>& out,
                             std::vector<uint64_t>* durations, std::vector<std::string>* labels) {
  if (dtypes.size() != ir_.output_ids.size()) throw Error(ErrorKind::Internal, "output dtype count mismatch");
  std::vector<gpu::Command> cmds;
  std::vector<uint64_t> before;
  resize_and_record(cmds, durations ? &before : nullptr, labels);
  out.resize(dtypes.size());
  std::vector<std::vector<uint8_t>> raw(dtypes.size());
  std::vector<gpu::Context::Read> reads;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    int32_t id = static_cast<int32_t>(ir_.output_ids[i]);
    const Tensor& t = tensor(id);
    if (same_words(dtypes[i], t.dtype, t.storage)) {  // read straight into the host tensor
      HostTensor& h = out[i];
      size_t bytes = static_cast<size_t>(t.numel()) * dtype_size(dtypes[i]);
      if (h.dtype != dtypes[i] || h.shape != t.dims || h.data.size() != bytes) h = HostTensor(dtypes[i], t.dims);
      reads.push_back({&buffer(id), 0, h.data.size(), h.data.data()});
      continue;
    }
    raw[i].resize(t.bytes(t.numel()));
    reads.push_back({&buffer(id), 0, raw[i].size(), raw[i].data()});
  }
  if (index_check_) index_check_->arm(reads);
  ctx_->submit(cmds, durations, reads);
  if (durations) durations->insert(durations->begin(), before.begin(), before.end());
  if (index_check_) index_check_->raise_if_reported();
  for (size_t i = 0; i < dtypes.size(); ++i) {
    const Tensor& t = tensors_[ir_.output_ids[i]];
    if (!same_words(dtypes[i], t.dtype, t.storage))
      out[i] = from_gpu_words(load_words(raw[i], static_cast<size_t>(t.numel()), t.storage), t.dtype, dtypes[i], t.dims);
  }
}

gpu::Context::Ticket Graph::execute_async(const Extend& extend) {
  std::vector<gpu::Command> cmds;
  resize_and_record(cmds, nullptr, nullptr);
  std::vector<gpu::Context::Read> reads;
  if (extend) extend(cmds, reads);
  if (index_check_) index_check_->arm(reads);
  return ctx_->submit_async(cmds, reads);
}

void Graph::finish(gpu::Context::Ticket t) {
  ctx_->wait(t);
  if (index_check_) index_check_->raise_if_reported();
}


}  // namespace etwebgpu::graph
