// kernel::Kernel: what an op builder declares for one GPU dispatch, and nothing else.
//
// A kernel names its WGSL source (an embedded shader file), the tensors and buffers it binds (in
// binding order), its override constants and preprocessor defines, and up to three functions of
// the live shapes: its uniform parameters, its dispatch size and whether it runs at all this run
// (a route). graph::Graph instantiates it (generated preamble, pipeline, uniform buffer, bind group
// built once at load) and owns the resize loop: bound checks of outputs, uniform writes, grid
// folding and deactivation. Output dims are a property of the node (OpContext::output), not of
// one of its kernels.
//
// The generated preamble declares, for each bound tensor NAME of storage S (kernel/storage.h):
//   alias NAME_T = f32 | f16 | i32 | u32;
//   @group(0) @binding(k) var<storage, read|read_write> NAME: array<NAME_T>;   (vec4: array<vec4<NAME_T>>)
// and `enable f16;` when any tensor is f16 (`enable subgroups;` with the define SUBGROUPS);
// buffers and the uniform likewise. Element helpers
//   fn load_NAME(i: u32) -> NAME_T        fn store_NAME(i: u32, v: NAME_T)   (outputs only)
// are emitted for shaders that call them. A bool/uint8 tensor (Storage::U8, NAME_T = u32) or an
// int8 one (Storage::I8, NAME_T = i32, sign-extended) is bound as NAME_words (array<u32>; outputs
// array<atomic<u32>> when the shader stores through store_NAME, a plain array<u32> when it writes
// whole words itself, one invocation per word) and reached only through the helpers or the words:
// a shader that indexes NAME directly is refused at load for it (Error Unsupported), never run on
// packed bytes. The shader body reads `f32(load_NAME(i))` (or `f32(NAME[i])` in float-only
// kernels), writes `store_NAME(i, NAME_T(v))` and may branch at preprocessing time on the defines
// NAME_F16 / NAME_FLOAT / NAME_INT / NAME_U8 / NAME_I8 (int8 defines NAME_INT too; see kernel/wgsl.h), so one source yields every
// storage variant; the pipeline cache keys on the generated text, hence on the storage types.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etwebgpu/error.h"
#include "gpu/context.h"
#include "kernel/storage.h"

namespace etwebgpu::kernel {

// Live values the functions of a kernel read: dims of tensors and integer arguments (SymInts and
// their arithmetic are live; other ints are constant).
class Live {
 public:
  virtual ~Live() = default;
  virtual const std::vector<int64_t>& dims(int32_t tensor) const = 0;
  virtual int64_t integer(int32_t value) const = 0;
  int64_t numel(int32_t tensor) const;
};

// Dispatch size. `flat` counts workgroups of a 1D-indexed kernel: folded into 2D past the
// per-dimension limit (the shader rebuilds the flat index, see docs/ADDING_AN_OP.md); z (a batch)
// is kept as is. Otherwise an
// explicit grid, checked against maxComputeWorkgroupsPerDimension. Zero workgroups: not recorded.
struct Groups {
  uint64_t x = 0, y = 1, z = 1;
  bool flat = true;
  static Groups linear(uint64_t workgroups) { return {workgroups, 1, 1, true}; }
  static Groups grid(uint64_t x, uint64_t y, uint64_t z = 1) { return {x, y, z, false}; }
  static Groups none() { return {0, 1, 1, true}; }
};

// Narrows a live size to the u32 a shader uniform holds; throws Error(Limit) naming `what`.
uint32_t u32(int64_t v, const char* what);
inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

enum class Access { Read, ReadWrite };

class Kernel {
 public:
  struct TensorBind { std::string name; int32_t id; Access access; bool vec4; };
  struct BufferBind {
    std::string name;            // "" = the shader declares it itself at binding `fixed`
    const gpu::Buffer* buffer;
    std::string wgsl_type;       // element type of the runtime array, or a struct type
    Access access;
    bool array = true;           // array<wgsl_type> or one wgsl_type
    int fixed = -1;
    // Float scratch: stored like the graph's float tensors (wgsl_type is its NAME_T alias).
    std::optional<Storage> storage;
  };
  using ParamsFn = std::function<void(const Live&, std::vector<uint8_t>&)>;

  explicit Kernel(std::string shader, std::string entry = "main") : shader_(std::move(shader)), entry_(std::move(entry)) {}
  // A kernel whose shader text is generated at load (fused elementwise groups) instead of an
  // embedded file; `label` names it in errors and pipeline labels. Preprocessed like a file.
  static Kernel generated(std::string label, std::string wgsl) {
    Kernel k(std::move(label));
    k.text_ = std::move(wgsl);
    return k;
  }

  // Generated WGSL put before the shader text (a fused epilogue's functions); preprocessed with it.
  Kernel& prelude(std::string wgsl) { prelude_ += wgsl; return *this; }
  Kernel& constant(const std::string& name, double v) { constants_[name] = v; return *this; }
  Kernel& define(const std::string& name) { defines_.push_back(name); return *this; }
  // tensor -1: an absent optional input, bound to a zero dummy as f32 with NAME_ABSENT defined.
  Kernel& input(std::string name, int32_t tensor, bool vec4 = false) {
    tensors_.push_back({std::move(name), tensor, Access::Read, vec4});
    order_.push_back({true, tensors_.size() - 1});
    return *this;
  }
  Kernel& output(std::string name, int32_t tensor, bool vec4 = false) {
    tensors_.push_back({std::move(name), tensor, Access::ReadWrite, vec4});
    order_.push_back({true, tensors_.size() - 1});
    return *this;
  }
  // A graph-owned buffer (scratch, raw packed constant, dummy): `array<wgsl_type>` unless !array.
  Kernel& buffer(std::string name, const gpu::Buffer& b, std::string wgsl_type, Access a, bool array = true) {
    buffers_.push_back({std::move(name), &b, std::move(wgsl_type), a, array, -1, std::nullopt});
    order_.push_back({false, buffers_.size() - 1});
    return *this;
  }
  // Graph-owned float scratch (split-K partials, attention scores): `array<NAME_T>` with NAME_T
  // and the defines NAME_F16 / NAME_FLOAT of storage `s`, as for a tensor; compute in f32.
  Kernel& buffer(std::string name, const gpu::Buffer& b, Storage s, Access a) {
    buffers_.push_back({name, &b, name + "_T", a, true, -1, s});
    order_.push_back({false, buffers_.size() - 1});
    return *this;
  }
  // A buffer the shader declares itself at a fixed binding (the index-check record, binding 15).
  Kernel& fixed(const gpu::Binding& b) {
    buffers_.push_back({"", b.buffer, "", Access::ReadWrite, true, static_cast<int>(b.binding), std::nullopt});
    return *this;
  }
  // The uniform `var<uniform> name: type;` written from `f` before each run (skipped when unchanged).
  template <class P>
  Kernel& params(std::function<P(const Live&)> f, std::string name = "P", std::string type = "Params") {
    static_assert(std::is_trivially_copyable_v<P> && sizeof(P) % 16 == 0, "uniform structs are 16-byte multiples");
    uniform_name_ = std::move(name);
    uniform_type_ = std::move(type);
    uniform_bytes_ = sizeof(P);
    params_ = [f = std::move(f)](const Live& l, std::vector<uint8_t>& out) {
      P p = f(l);
      out.resize(sizeof(P));
      std::memcpy(out.data(), &p, sizeof(P));
    };
    order_.push_back({false, SIZE_MAX});
    return *this;
  }
  // A uniform whose size is known only at load (generated kernels): `f` fills exactly `bytes`.
  Kernel& params_bytes(size_t bytes, ParamsFn f, std::string name = "P", std::string type = "Params") {
    uniform_name_ = std::move(name);
    uniform_type_ = std::move(type);
    uniform_bytes_ = bytes;
    params_ = std::move(f);
    order_.push_back({false, SIZE_MAX});
    return *this;
  }
  Kernel& groups(std::function<Groups(const Live&)> f) { groups_ = std::move(f); return *this; }
  // One invocation per `per_invocation` elements of `tensor`'s live numel, `wg` per workgroup.
  Kernel& flat(int32_t tensor, uint64_t per_invocation = 1, uint32_t wg = 256);
  // A route: the kernel is recorded only in runs where `f` holds.
  Kernel& when(std::function<bool(const Live&)> f) { when_ = std::move(f); return *this; }
  Kernel& variant(std::string v) { variant_ = std::move(v); return *this; }

  const std::string& shader() const { return shader_; }
  const std::string& entry() const { return entry_; }
  const gpu::Constants& constants() const { return constants_; }
  const std::vector<TensorBind>& tensors() const { return tensors_; }
  const std::vector<BufferBind>& buffers() const { return buffers_; }
  const std::string& variant_name() const { return variant_; }
  size_t uniform_bytes() const { return uniform_bytes_; }
  const ParamsFn& params_fn() const { return params_; }
  const std::function<Groups(const Live&)>& groups_fn() const { return groups_; }
  const std::function<bool(const Live&)>& when_fn() const { return when_; }

  // The WGSL module for these storage types (one per tensor, in tensors() order): generated
  // preamble + the preprocessed shader.
  std::string source(const std::vector<Storage>& storage) const;

 private:
  struct Slot { bool tensor; size_t index; };  // binding order; index SIZE_MAX = the uniform
  std::string shader_, entry_, variant_;
  std::string text_;  // generated source; empty = the embedded shader named shader_
  std::string prelude_;
  gpu::Constants constants_;
  std::vector<std::string> defines_;
  std::vector<TensorBind> tensors_;
  std::vector<BufferBind> buffers_;
  std::vector<Slot> order_;
  std::string uniform_name_, uniform_type_;
  size_t uniform_bytes_ = 0;
  ParamsFn params_;
  std::function<Groups(const Live&)> groups_;
  std::function<bool(const Live&)> when_;

 public:
  // Binding numbers follow declaration order (skipping fixed ones); what Graph binds.
  struct Slots {
    std::vector<uint32_t> tensor, buffer;
    uint32_t uniform = UINT32_MAX;
  };
  Slots slots() const;
};

}  // namespace etwebgpu::kernel
