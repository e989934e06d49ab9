// Fusion at load: chains of float elementwise op calls become one call of
// `etwebgpu.fused_elementwise`, which evaluates the whole expression per element in one kernel
// (ops/elementwise/fused.cpp). The rewrite runs on the IR before any builder (Graph::build), so
// later passes (memory planning) see the fused chain.
//
// Ops say which calls they can evaluate as a term of a fused expression by registering a parser
// (ETW_REGISTER_FUSABLE next to their ETW_REGISTER_OP); the pass knows no elementwise op by name.
// It reads through layout calls (graph/layout_view.h): a slice, permute, expand ... (or a chain of
// them) whose output only a member reads becomes a view of the tensor it starts from, and the
// copies go.
#pragma once
#include <cstdint>
#include <memory>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "format/ir.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/use_def.h"

namespace etwebgpu::graph {

// One float elementwise op as the fused kernel evaluates it: unary_f32 / binary_f32 with op code
// `op` (the table in ops/elementwise/elementwise_ops.h).
struct FusedTerm {
  bool binary = false;
  uint32_t op = 0;
  int32_t x = -1, y = -1;  // tensor operands (value ids); y = -1: unary, or a binary op's scalar
  float c[4] = {0, 0, 0, 0};  // unary: f0, f1, f2, i0 (as a float); binary: alpha, scalar
  std::string label;       // short name for kernel labels ("mul", "rsqrt"); set by the pass
};

// Reads a call as a term, or nullopt when this call cannot be fused (non-float operands, a mode
// only the op's own kernel has). May throw on malformed arguments: the call is then left alone
// and its own builder reports the error.
using TermParser = std::optional<FusedTerm> (*)(const OpContext&);

class FusableOps {
 public:
  static FusableOps& global();
  void add(const std::string& name, TermParser p);
  TermParser find(const std::string& name) const;

 private:
  std::vector<std::pair<std::string, TermParser>> parsers_;
};

struct FusableRegistration {
  FusableRegistration(const char* name, TermParser p) { FusableOps::global().add(name, p); }
};
#define ETW_REGISTER_FUSABLE(name, fn) \
  static ::etwebgpu::graph::FusableRegistration ETW_CONCAT(etw_fuse_reg_, __COUNTER__)(name, fn)

inline constexpr const char* kFusedOp = "etwebgpu.fused_elementwise";
// At most this many distinct tensor inputs per fused kernel (plus the output: within the default
// maxStorageBuffersPerShaderStage of 8).
inline constexpr size_t kMaxFusedInputs = 6;

// A fused group is the call [inputs..., Expr, output]: a typed expression (format::VkExpr) whose
// terms name the call's inputs and earlier terms, the last term giving the output. An input may
// be read through a view (VkExpr::views, format::VkExprView): an affine map of its stored
// elements; a term may be a cat of two values along an output dim (VkExprTerm::split). Only the
// fused elementwise kernel reads them; the epilogue pass leaves a call that has them alone.

// Whether every fused kernel can evaluate `e`: no input view and no cat term, which only the
// fused elementwise kernel reads.
bool plain_expression(const format::VkExpr& e);

// Shared with the epilogue pass (graph/epilogue_fusion.h):
// A float tensor (f32 / f16 / f64)?
bool float_tensor(const format::VkGraphIR& ir, int32_t id);
// Tensor `id` becomes a constant over `bytes` (kept alive by ir.owned_bytes), with storage of its
// own: what a pass computed at load.
void make_constant(format::VkGraphIR& ir, int32_t id, std::shared_ptr<const std::vector<uint8_t>> bytes);
// A new constant tensor value over `bytes` (kept alive by ir.owned_bytes); returns its id.
int32_t add_owned_constant(format::VkGraphIR& ir, std::shared_ptr<std::vector<uint8_t>> bytes, format::VkDType dtype,
                           std::vector<int64_t> dims);
// Projections of one input, for a multi-output kernel: call i (its input, argument 0, a tensor or
// a clone of source s) and the calls after it (clones skipped; at most `max` in all) that
// `accept(j)` takes, each reading call i's input or its own clone of s that only it reads, with
// nothing between the first and the last writing s. Returns the group's chain indices (fewer than
// two: nothing to fuse) and, in *drop, the later calls' input clones, which can go.
std::vector<size_t> projection_group(const UseDef& ix, size_t i, size_t max, const std::function<bool(size_t)>& accept,
                                     std::vector<size_t>* drop);
// The projection rewrites' loop: every call i that `candidate` takes and the calls after it that
// `compatible(i, j)` (and candidate) take form a projection_group of up to `max`; `build(group)`
// makes the call that replaces call i, the group's other calls and their input clones go.
// Returns the groups rewritten.
size_t rewrite_projection_groups(format::VkGraphIR& ir, const UseDef& ix, size_t max,
                                 const std::function<bool(size_t)>& candidate,
                                 const std::function<bool(size_t, size_t)>& compatible,
                                 const std::function<format::VkOpCall(const std::vector<size_t>&)>& build);
// A new constant of the constants `parts` ([r_k, C], `elem` bytes an element) one after another:
// [sum r_k, C].
int32_t stack_rows(format::VkGraphIR& ir, const std::vector<int32_t>& parts, format::VkDType dtype, size_t elem);
// A new constant [R, sum w_k] of the first w_k columns of each part ([R, >= w_k]) side by side.
int32_t stack_columns(format::VkGraphIR& ir, const std::vector<int32_t>& parts, const std::vector<int64_t>& widths,
                      format::VkDType dtype, size_t elem);
// A new constant of the rows of constants a and b ([R, C] each) taken in turn: [2R, C], row 2r
// = a's row r, row 2r + 1 = b's.
int32_t interleave_rows(format::VkGraphIR& ir, int32_t a, int32_t b, format::VkDType dtype, size_t elem);
// A new constant [R, 2 width] of the first `width` columns of a and b ([R, >= width]) taken in
// turn: column 2c = a's column c, 2c + 1 = b's.
int32_t interleave_columns(format::VkGraphIR& ir, int32_t a, int32_t b, int64_t width, format::VkDType dtype, size_t elem);
// An f32 constant of `count` elements (rank `rank`, or any rank when 0): its values, else empty.
std::vector<double> f32_values(const format::VkGraphIR& ir, int32_t id, int64_t count, size_t rank = 0);
// A new f32 constant of `values` (rounded from double) with dims `dims`; returns its id.
int32_t add_f32_constant(format::VkGraphIR& ir, const std::vector<double>& values, std::vector<int64_t> dims);
// A new Int32 constant [values.size()] of `values` (each in int32 range; a gather's table).
int32_t add_i32_constant(format::VkGraphIR& ir, const std::vector<int64_t>& values);
// A 2D constant of `dtype` whose data holds at least `elem` bytes per element of its dims.
bool constant_2d(const format::VkGraphIR& ir, int32_t id, format::VkDType dtype, size_t elem);
// Two non-tensor arguments with one value (the same id, or equal scalars, lists or strings).
bool same_scalar(const format::VkGraphIR& ir, int32_t a, int32_t b);
// New Null / Int / SymInt / String / IntList / ValueList values and computed (non-constant) tensors; return their ids.
int32_t add_null(format::VkGraphIR& ir);
int32_t add_int(format::VkGraphIR& ir, int64_t x);
int32_t add_symint(format::VkGraphIR& ir);  // a SymInt a call computes (0 until it runs)
int32_t add_string(format::VkGraphIR& ir, std::string s);
int32_t add_tensor(format::VkGraphIR& ir, format::VkDType dtype, std::vector<int64_t> dims);
int32_t add_int_list(format::VkGraphIR& ir, std::vector<int64_t> ints);
int32_t add_value_list(format::VkGraphIR& ir, std::vector<int32_t> ids);
// The first delegate memory object id no tensor of `ir` uses: a rewrite that gives a tensor
// storage of its own takes ids from here.
int32_t unused_memory_object(const format::VkGraphIR& ir);
// Tensor t is written earlier than the export wrote it (by a call a rewrite moved it to): where it
// is in a delegate memory object, it gets one of its own (id `next`, then advanced), so no tensor
// packed with it is overwritten in between.
void own_storage(format::VkGraphIR& ir, int32_t t, int32_t& next);
// Drops the calls `removed` marks from `ir.chain`, keeping the others' order.
void drop_calls(format::VkGraphIR& ir, const std::vector<bool>& removed);
// Rebuilds `ir.chain`: call i is replaced by `replacement[i]` where that is not empty (its calls
// run there, in order), else dropped where `removed[i]`, else kept.
void splice_calls(format::VkGraphIR& ir, const std::vector<bool>& removed,
                  std::vector<std::vector<format::VkOpCall>>& replacement);
// The same with at most one call in place of each.
void splice_calls(format::VkGraphIR& ir, const std::vector<bool>& removed,
                  std::vector<std::optional<format::VkOpCall>>& replacement);
// `c` as a labelled term of float tensors, or nullopt (not fusable, or malformed: left to its builder).
std::optional<FusedTerm> fusable_term(Graph& g, const format::VkGraphIR& ir, const format::VkOpCall& c);
// The expression of `terms` (term k writes ids[k]; -1: a value no other term reads) over
// `inputs`: operands become input and term references.
format::VkExpr expression(const std::vector<FusedTerm>& terms, const std::vector<int32_t>& ids,
                          const std::vector<int32_t>& inputs);
// A new Expr value holding `e`; returns its id.
int32_t add_expr(format::VkGraphIR& ir, format::VkExpr e);

struct FusionStats {
  size_t groups = 0, calls_removed = 0;
};

// Rewrites `ir.chain` in place (and appends one Expr value per group). `g` reads arguments
// for the parsers; its tensors must be set up for every value of `ir` before the call.
FusionStats fuse_elementwise(Graph& g, format::VkGraphIR& ir, const UseDef& ix);

}  // namespace etwebgpu::graph
