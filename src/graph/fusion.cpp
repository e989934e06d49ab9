#include "graph/fusion.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <set>

#include "etwebgpu/tensor.h"
#include "graph/constant_folding.h"
#include "graph/layout_view.h"
#include "graph/memory_plan.h"

namespace etwebgpu::graph {

FusableOps& FusableOps::global() {
  static FusableOps r;
  return r;
}

void FusableOps::add(const std::string& name, TermParser p) { parsers_.emplace_back(name, p); }

TermParser FusableOps::find(const std::string& name) const {
  for (auto& [n, p] : parsers_)
    if (n == name) return p;
  return nullptr;
}


bool plain_expression(const format::VkExpr& e) {
  return std::none_of(e.views.begin(), e.views.end(), [](const auto& v) { return v.has_value(); }) &&
         std::none_of(e.terms.begin(), e.terms.end(), [](const auto& t) { return t.split.has_value(); });
}

bool float_tensor(const format::VkGraphIR& ir, int32_t id) {
  const auto& v = ir.values[id];
  if (v.kind != format::VkValueKind::Tensor) return false;
  auto t = v.tensor.dtype;
  return t == VkDType::Float32 || t == VkDType::Float16 || t == VkDType::Float64;
}

void make_constant(format::VkGraphIR& ir, int32_t id, std::shared_ptr<const std::vector<uint8_t>> bytes) {
  ir.constants.push_back(format::VkConstant{format::ByteSpan(bytes->data(), bytes->size()), {}});
  ir.owned_bytes.push_back(std::move(bytes));
  auto& t = ir.values[id].tensor;
  t.constant_id = static_cast<int32_t>(ir.constants.size() - 1);
  t.mem_obj_id = -1;
}

int32_t add_owned_constant(format::VkGraphIR& ir, std::shared_ptr<std::vector<uint8_t>> bytes, format::VkDType dtype,
                           std::vector<int64_t> dims) {
  format::VkValue v;
  v.kind = format::VkValueKind::Tensor;
  v.tensor.dtype = dtype;
  v.tensor.dims = std::move(dims);
  ir.values.push_back(std::move(v));
  const int32_t id = static_cast<int32_t>(ir.values.size() - 1);
  make_constant(ir, id, std::move(bytes));
  return id;
}

std::vector<size_t> projection_group(const UseDef& ix, size_t i, size_t max, const std::function<bool(size_t)>& accept,
                                     std::vector<size_t>* drop) {
  const auto& ir = ix.ir();
  const size_t n = ir.chain.size();
  const int32_t x = ir.chain[i].args[0];
  size_t at = n;
  const int32_t src = ix.clone_source(x, &at);
  std::vector<size_t> group{i};
  std::vector<size_t> clones;
  for (size_t j = i + 1; j < n && group.size() < max; ++j) {
    const auto& c = ir.chain[j];
    if (c.name == "aten.clone.default") continue;
    if (c.args.empty() || !accept(j)) break;
    size_t cl = n;
    if (ix.clone_source(c.args[0], &cl) != src) break;
    if (c.args[0] != x) {
      // Its own clone, read by this call alone, can go: call i's input serves.
      if (cl == n || ix.sole_reader(c.args[0], cl) != j) break;
      clones.push_back(cl);
    }
    group.push_back(j);
  }
  // The group runs at call i: s must hold there what the last call read.
  if (group.size() < 2 || !ix.unchanged_between(src, i, group.back())) return {i};
  if (drop) *drop = std::move(clones);
  return group;
}

int32_t stack_rows(format::VkGraphIR& ir, const std::vector<int32_t>& parts, format::VkDType dtype, size_t elem) {
  const int64_t cols = ir.values[parts[0]].tensor.dims[1];
  int64_t rows = 0;
  for (int32_t p : parts) rows += ir.values[p].tensor.dims[0];
  auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(rows * cols) * elem);
  size_t off = 0;
  for (int32_t p : parts) {
    const auto& t = ir.values[p].tensor;
    const size_t size = static_cast<size_t>(t.dims[0] * cols) * elem;
    std::memcpy(bytes->data() + off, ir.constants[t.constant_id].data.data(), size);
    off += size;
  }
  return add_owned_constant(ir, std::move(bytes), dtype, {rows, cols});
}

int32_t stack_columns(format::VkGraphIR& ir, const std::vector<int32_t>& parts, const std::vector<int64_t>& widths,
                      format::VkDType dtype, size_t elem) {
  const int64_t rows = ir.values[parts[0]].tensor.dims[0];
  int64_t cols = 0;
  for (int64_t w : widths) cols += w;
  auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(rows * cols) * elem);
  int64_t off = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const auto& t = ir.values[parts[k]].tensor;
    const uint8_t* src = ir.constants[t.constant_id].data.data();
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(bytes->data() + static_cast<size_t>(r * cols + off) * elem, src + static_cast<size_t>(r * t.dims[1]) * elem,
                  static_cast<size_t>(widths[k]) * elem);
    off += widths[k];
  }
  return add_owned_constant(ir, std::move(bytes), dtype, {rows, cols});
}

int32_t interleave_rows(format::VkGraphIR& ir, int32_t a, int32_t b, format::VkDType dtype, size_t elem) {
  const int64_t rows = ir.values[a].tensor.dims[0], cols = ir.values[a].tensor.dims[1];
  const size_t row = static_cast<size_t>(cols) * elem;
  auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(2 * rows) * row);
  const uint8_t* pa = ir.constants[ir.values[a].tensor.constant_id].data.data();
  const uint8_t* pb = ir.constants[ir.values[b].tensor.constant_id].data.data();
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(bytes->data() + static_cast<size_t>(2 * r) * row, pa + static_cast<size_t>(r) * row, row);
    std::memcpy(bytes->data() + static_cast<size_t>(2 * r + 1) * row, pb + static_cast<size_t>(r) * row, row);
  }
  return add_owned_constant(ir, std::move(bytes), dtype, {2 * rows, cols});
}

int32_t interleave_columns(format::VkGraphIR& ir, int32_t a, int32_t b, int64_t width, format::VkDType dtype, size_t elem) {
  const int64_t rows = ir.values[a].tensor.dims[0];
  auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(rows * 2 * width) * elem);
  const uint8_t* src[2] = {ir.constants[ir.values[a].tensor.constant_id].data.data(),
                           ir.constants[ir.values[b].tensor.constant_id].data.data()};
  const int64_t stride[2] = {ir.values[a].tensor.dims[1], ir.values[b].tensor.dims[1]};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; ++c)
      for (int k = 0; k < 2; ++k)
        std::memcpy(bytes->data() + static_cast<size_t>(r * 2 * width + 2 * c + k) * elem,
                    src[k] + static_cast<size_t>(r * stride[k] + c) * elem, elem);
  return add_owned_constant(ir, std::move(bytes), dtype, {rows, 2 * width});
}

std::vector<double> f32_values(const format::VkGraphIR& ir, int32_t id, int64_t count, size_t rank) {
  const auto& v = ir.values[id];
  if (v.kind != format::VkValueKind::Tensor || v.tensor.dtype != VkDType::Float32 || !v.tensor.is_constant() ||
      static_cast<size_t>(v.tensor.constant_id) >= ir.constants.size() || numel(v.tensor.dims) != count ||
      (rank && v.tensor.dims.size() != rank))
    return {};
  const auto& data = ir.constants[v.tensor.constant_id].data;
  if (data.size() < static_cast<size_t>(count) * 4) return {};
  std::vector<double> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    float f;
    std::memcpy(&f, data.data() + 4 * i, 4);
    out[static_cast<size_t>(i)] = f;
  }
  return out;
}

int32_t add_f32_constant(format::VkGraphIR& ir, const std::vector<double>& values, std::vector<int64_t> dims) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    const float f = static_cast<float>(values[i]);
    std::memcpy(bytes->data() + 4 * i, &f, 4);
  }
  return add_owned_constant(ir, std::move(bytes), VkDType::Float32, std::move(dims));
}

int32_t add_i32_constant(format::VkGraphIR& ir, const std::vector<int64_t>& values) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    const auto v = static_cast<int32_t>(values[i]);
    std::memcpy(bytes->data() + 4 * i, &v, 4);
  }
  return add_owned_constant(ir, std::move(bytes), VkDType::Int32, {static_cast<int64_t>(values.size())});
}

bool constant_2d(const format::VkGraphIR& ir, int32_t id, format::VkDType dtype, size_t elem) {
  const auto& v = ir.values[id];
  if (v.kind != format::VkValueKind::Tensor || !v.tensor.is_constant() || v.tensor.dtype != dtype || v.tensor.dims.size() != 2 ||
      static_cast<size_t>(v.tensor.constant_id) >= ir.constants.size())
    return false;
  return ir.constants[v.tensor.constant_id].data.size() >= static_cast<size_t>(v.tensor.dims[0] * v.tensor.dims[1]) * elem;
}

bool same_scalar(const format::VkGraphIR& ir, int32_t a, int32_t b) {
  const auto &u = ir.values[a], &v = ir.values[b];
  return a == b || (u.kind == v.kind && u.kind != format::VkValueKind::Tensor && u.kind != format::VkValueKind::ValueList &&
                    u.int_val == v.int_val && u.double_val == v.double_val && u.bool_val == v.bool_val && u.ints == v.ints &&
                    u.doubles == v.doubles && u.bools == v.bools && u.str == v.str);
}

int32_t add_null(format::VkGraphIR& ir) {
  ir.values.push_back(format::VkValue{});
  return static_cast<int32_t>(ir.values.size() - 1);
}

int32_t add_string(format::VkGraphIR& ir, std::string s) {
  format::VkValue v;
  v.kind = format::VkValueKind::String;
  v.str = std::move(s);
  ir.values.push_back(std::move(v));
  return static_cast<int32_t>(ir.values.size() - 1);
}

int32_t add_int(format::VkGraphIR& ir, int64_t x) {
  format::VkValue v;
  v.kind = format::VkValueKind::Int;
  v.int_val = x;
  ir.values.push_back(std::move(v));
  return static_cast<int32_t>(ir.values.size() - 1);
}

int32_t add_symint(format::VkGraphIR& ir) {
  format::VkValue v;
  v.kind = format::VkValueKind::SymInt;
  ir.values.push_back(std::move(v));
  return static_cast<int32_t>(ir.values.size() - 1);
}

int32_t add_tensor(format::VkGraphIR& ir, format::VkDType dtype, std::vector<int64_t> dims) {
  format::VkValue v;
  v.kind = format::VkValueKind::Tensor;
  v.tensor.dtype = dtype;
  v.tensor.dims = std::move(dims);
  v.tensor.constant_id = -1;
  v.tensor.mem_obj_id = -1;
  ir.values.push_back(std::move(v));
  return static_cast<int32_t>(ir.values.size() - 1);
}

int32_t add_int_list(format::VkGraphIR& ir, std::vector<int64_t> ints) {
  format::VkValue v;
  v.kind = format::VkValueKind::IntList;
  v.ints = std::move(ints);
  ir.values.push_back(std::move(v));
  return static_cast<int32_t>(ir.values.size() - 1);
}

int32_t add_value_list(format::VkGraphIR& ir, std::vector<int32_t> ids) {
  format::VkValue v;
  v.kind = format::VkValueKind::ValueList;
  v.ids = std::move(ids);
  ir.values.push_back(std::move(v));
  return static_cast<int32_t>(ir.values.size() - 1);
}

size_t rewrite_projection_groups(format::VkGraphIR& ir, const UseDef& ix, size_t max,
                                 const std::function<bool(size_t)>& candidate,
                                 const std::function<bool(size_t, size_t)>& compatible,
                                 const std::function<format::VkOpCall(const std::vector<size_t>&)>& build) {
  const size_t n = ir.chain.size();
  std::vector<bool> removed(n, false);
  std::vector<std::optional<format::VkOpCall>> replacement(n);
  size_t fused = 0;
  for (size_t i = 0; i < n; ++i) {
    if (removed[i] || replacement[i] || !candidate(i)) continue;
    std::vector<size_t> clones;
    const auto group =
        projection_group(ix, i, max, [&](size_t j) { return candidate(j) && compatible(i, j); }, &clones);
    if (group.size() < 2) continue;
    replacement[i] = build(group);
    for (size_t t = 1; t < group.size(); ++t) removed[group[t]] = true;
    for (size_t cl : clones) removed[cl] = true;
    ++fused;
  }
  if (fused) splice_calls(ir, removed, replacement);
  return fused;
}

int32_t unused_memory_object(const format::VkGraphIR& ir) {
  int32_t next = 0;
  for (const auto& v : ir.values)
    if (v.kind == format::VkValueKind::Tensor) next = std::max(next, v.tensor.mem_obj_id + 1);
  return next;
}

void own_storage(format::VkGraphIR& ir, int32_t t, int32_t& next) {
  if (ir.values[t].tensor.mem_obj_id >= 0) ir.values[t].tensor.mem_obj_id = next++;
}

void drop_calls(format::VkGraphIR& ir, const std::vector<bool>& removed) {
  std::vector<format::VkOpCall> chain;
  for (size_t i = 0; i < ir.chain.size(); ++i)
    if (i >= removed.size() || !removed[i]) chain.push_back(std::move(ir.chain[i]));
  ir.chain = std::move(chain);
}

void splice_calls(format::VkGraphIR& ir, const std::vector<bool>& removed,
                  std::vector<std::vector<format::VkOpCall>>& replacement) {
  std::vector<format::VkOpCall> chain;
  for (size_t i = 0; i < ir.chain.size(); ++i) {
    if (i < replacement.size() && !replacement[i].empty())
      for (auto& c : replacement[i]) chain.push_back(std::move(c));
    else if (i >= removed.size() || !removed[i])
      chain.push_back(std::move(ir.chain[i]));
  }
  ir.chain = std::move(chain);
}

void splice_calls(format::VkGraphIR& ir, const std::vector<bool>& removed,
                  std::vector<std::optional<format::VkOpCall>>& replacement) {
  std::vector<std::vector<format::VkOpCall>> calls(replacement.size());
  for (size_t i = 0; i < replacement.size(); ++i)
    if (replacement[i]) calls[i].push_back(std::move(*replacement[i]));
  splice_calls(ir, removed, calls);
}

namespace {

// Term t over operands a and b (b: Scalar for a unary term or a binary one's scalar).
format::VkExprTerm expr_term(const FusedTerm& t, format::VkExprOperand a, format::VkExprOperand b) {
  format::VkExprTerm x;
  x.binary = t.binary;
  x.op = t.op;
  x.a = a;
  x.b = b;
  std::copy(t.c, t.c + 4, x.c);
  x.label = t.label;
  return x;
}

}  // namespace

format::VkExpr expression(const std::vector<FusedTerm>& terms, const std::vector<int32_t>& ids,
                          const std::vector<int32_t>& inputs) {
  using Kind = format::VkExprOperand::Kind;
  auto ref = [&](int32_t id) -> format::VkExprOperand {
    for (size_t k = 0; k < ids.size(); ++k)
      if (ids[k] == id) return {Kind::Term, static_cast<uint32_t>(k)};
    for (size_t k = 0; k < inputs.size(); ++k)
      if (inputs[k] == id) return {Kind::Input, static_cast<uint32_t>(k)};
    throw Error(ErrorKind::Internal, "fusion: operand %" + std::to_string(id) + " is neither an input nor a term");
  };
  format::VkExpr e;
  e.views.assign(inputs.size(), std::nullopt);
  for (const auto& t : terms) e.terms.push_back(expr_term(t, ref(t.x), t.binary && t.y >= 0 ? ref(t.y) : format::VkExprOperand{}));
  return e;
}

int32_t add_expr(format::VkGraphIR& ir, format::VkExpr e) {
  format::VkValue v;
  v.kind = format::VkValueKind::Expr;
  v.expr = std::make_shared<const format::VkExpr>(std::move(e));
  ir.values.push_back(std::move(v));
  return static_cast<int32_t>(ir.values.size() - 1);
}

std::optional<FusedTerm> fusable_term(Graph& g, const format::VkGraphIR& ir, const format::VkOpCall& c) {
  TermParser p = FusableOps::global().find(c.name);
  if (!p || c.args.empty()) return std::nullopt;
  std::optional<FusedTerm> term;
  Node scratch;
  try {
    OpContext oc{g, c, scratch};
    term = p(oc);
  } catch (const Error&) {
    return std::nullopt;  // left to the op's own builder, which reports it
  }
  if (!term) return term;
  // Label: the op's short name, "aten.mul.Tensor" -> "mul".
  std::string label = c.name.substr(c.name.find('.') + 1);
  label = label.substr(0, label.find('.'));
  for (char& ch : label)
    if (!std::islower(static_cast<unsigned char>(ch)) && !std::isdigit(static_cast<unsigned char>(ch))) ch = '_';
  term->label = label.empty() ? "op" : label;
  int32_t out = c.args.back();
  if (!float_tensor(ir, out) || !float_tensor(ir, term->x) || (term->y >= 0 && !float_tensor(ir, term->y)))
    return std::nullopt;
  // A one-element float constant as the second operand (a scalar the export lifted into a
  // tensor: MobileNetV3's hardsigmoid, x + 3 then / 6) that does not shape the output is the
  // term's scalar, not an input: a binding less, which lets its group become a conv's prologue.
  if (term->binary && term->y >= 0) {
    std::optional<double> v = scalar_constant(ir, term->y);
    if (v && ir.values[out].tensor.dims == ir.values[term->x].tensor.dims) {
      term->c[1] = static_cast<float>(*v);
      term->y = -1;
    }
  }
  return term;
}

FusionStats fuse_elementwise(Graph& g, format::VkGraphIR& ir, const UseDef& ix) {
  const size_t n = ir.chain.size();
  FusionStats stats;
  // Terms of the calls that can be fused.
  std::vector<std::optional<FusedTerm>> term(n);
  for (size_t i = 0; i < n; ++i) term[i] = fusable_term(g, ir, ir.chain[i]);

  // Layout calls (graph/layout_view.h) whose output one call reads: when that reader is a member,
  // the group reads the tensor they start from through the composed view, and the calls go
  // (Whisper's stem: conv -> permute -> add of the positions; rotary embeddings: slices of q ->
  // neg). A chain of them composes when each output feeds only the next call. Only at static
  // shapes: a view is fixed at load. A chain of copy-free views (memory_plan.h) costs nothing
  // and stays, for the epilogue pass to read across.
  struct Through {
    int32_t src;
    format::VkExprView view;
    std::vector<size_t> calls;  // chain positions, in order
    std::string label;          // "slice+unsqueeze"
    bool copies = false;        // some call moves elements (not a copy-free view)
  };
  std::map<int32_t, Through> through;  // layout output -> how the group reads it
  for (size_t i = 0; i < n && g.options().static_shapes; ++i) {
    const format::VkOpCall& c = ir.chain[i];
    if (!layout_op(c.name) || c.args.size() < 2) continue;
    const int32_t src = c.args[0], out = c.args.back();
    if (!float_tensor(ir, src) || !float_tensor(ir, out) || ir.values[src].tensor.dtype != ir.values[out].tensor.dtype ||
        ix.sole_reader(out, i) == UseDef::npos)
      continue;
    Through t{src, contiguous_view(ir.values[src].tensor.dims), {}, "", false};
    if (auto prev = through.find(src); prev != through.end() && ix.sole_reader(src, prev->second.calls.back()) == i)
      t = prev->second;
    std::optional<format::VkExprView> v = view_through(ir, c, t.view);
    if (!v || v->dims.size() > 8) continue;  // the kernel's Shape holds 8 dims
    t.view = std::move(*v);
    t.calls.push_back(i);
    std::string name = c.name.substr(c.name.find('.') + 1);
    name = name.substr(0, name.find('.'));
    if (name.size() > 5 && name.compare(name.size() - 5, 5, "_copy") == 0) name.resize(name.size() - 5);
    t.label += (t.label.empty() ? "" : "+") + name;
    t.copies = t.copies || !is_contiguous_view(ir, c);
    through[out] = std::move(t);
  }
  // The entries that save a copy.
  for (auto it = through.begin(); it != through.end();) it = it->second.copies ? std::next(it) : through.erase(it);

  // Cats a group reads in place (rotate_half: cat(-x[..., d/2:], x[..., :d/2]) * sin): a float
  // cat at static shapes is a member (a group of its own when no member reads it), taking each element
  // from the part its coordinate along the cat dim falls in (a select, bit for bit); the parts'
  // inputs are read in their place along that dim. A term that makes a part joins the group
  // unless the cat lists it twice (it would be needed in two places).
  struct Cat {
    int64_t dim;                  // of the cat's dims
    std::vector<int32_t> parts;
    std::vector<int64_t> starts;  // of each part along dim
  };
  std::map<size_t, Cat> cats;  // by chain position
  for (size_t i = 0; i < n && g.options().static_shapes; ++i) {
    const format::VkOpCall& c = ir.chain[i];
    if (c.name != "aten.cat.default" || c.args.size() != 3 || ir.values[c.args[0]].kind != format::VkValueKind::ValueList)
      continue;
    const std::optional<int64_t> dim = static_int(ir, c.args[1]);
    const int32_t out = c.args[2];
    if (!dim || !float_tensor(ir, out)) continue;
    const std::vector<int64_t>& od = ir.values[out].tensor.dims;
    const int64_t r = static_cast<int64_t>(od.size()), d = *dim < 0 ? *dim + r : *dim;
    Cat cat{d, ir.values[c.args[0]].ids, {}};
    bool ok = d >= 0 && d < r && cat.parts.size() >= 2;
    int64_t at = 0;
    for (int32_t p : cat.parts) {
      if (!ok || !float_tensor(ir, p) || ir.values[p].tensor.dtype != ir.values[out].tensor.dtype) {
        ok = false;
        break;
      }
      std::vector<int64_t> pd = ir.values[p].tensor.dims;
      cat.starts.push_back(at);
      at += pd.size() == od.size() ? pd[d] : 0;
      if (pd.size() == od.size()) pd[d] = od[d];
      const size_t maker = ix.producer(p);
      ok = pd == od && ir.values[p].tensor.dims[d] > 0 &&
           !(maker != UseDef::npos && term[maker] && std::count(cat.parts.begin(), cat.parts.end(), p) > 1);
    }
    if (ok && at == od[d]) cats[i] = std::move(cat);
  }
  auto member = [&](size_t i) { return i != UseDef::npos && (term[i] || cats.count(i)); };
  auto operands = [&](size_t m) {
    if (cats.count(m)) return cats.at(m).parts;
    std::vector<int32_t> r{term[m]->x};
    if (term[m]->y >= 0) r.push_back(term[m]->y);
    return r;
  };

  // Where a member's value is taken: in the output, or in part k of the cat at chain position c.
  using Place = std::pair<size_t, size_t>;
  const Place kOutput{UseDef::npos, 0};
  // What a group becomes: the fused call's reads and expression, and the layout calls it absorbs.
  struct Plan {
    std::vector<int32_t> reads;
    format::VkExpr expr;
    std::set<const Through*> absorbed;
  };
  // Without a plan, *misplaced holds the cats that cannot be read in place where they are.
  auto plan = [&](const std::vector<size_t>& members, std::vector<size_t>* misplaced) -> std::optional<Plan> {
    // The root is the last member in chain order (its output is the only one that escapes).
    const size_t last = members.back();
    const int32_t out = ir.chain[last].args.back();
    const std::vector<int64_t>& od = ir.values[out].tensor.dims;
    auto dims = [&](int32_t t) -> const std::vector<int64_t>& { return ir.values[t].tensor.dims; };
    std::set<int32_t> internal;
    for (size_t m : members)
      if (m != last) internal.insert(ir.chain[m].args.back());
    // Places, from the root down. A cat is read in place only in the output (not in another
    // cat's part) and where the output does not broadcast it along its dim.
    std::map<size_t, Place> place{{last, kOutput}};
    for (auto m = members.rbegin(); m != members.rend(); ++m) {
      const auto cat = cats.find(*m);
      if (cat != cats.end()) {
        const std::vector<int64_t>& cd = dims(ir.chain[*m].args.back());
        const int64_t dim = cat->second.dim + static_cast<int64_t>(od.size() - cd.size());
        if (place.at(*m) != kOutput || od.size() < cd.size() || od[dim] != cd[cat->second.dim]) misplaced->push_back(*m);
      }
      const std::vector<int32_t> ops = operands(*m);
      for (size_t k = 0; k < ops.size(); ++k)
        if (internal.count(ops[k])) place[ix.producer(ops[k])] = cat != cats.end() ? Place{*m, k} : place.at(*m);
    }
    if (!misplaced->empty()) return std::nullopt;
    // The fused kernel reads its inputs at the root's position, later than the members did: no
    // call in between may write them or storage they share, and the output must not share an
    // input's storage (one binding cannot be read-only and read-write at once).
    auto steady = [&](int32_t e, size_t from) {
      return !(ix.memory(out) >= 0 && ix.memory(out) == ix.memory(e)) && ix.unchanged_between(e, from, last, members);
    };
    Plan p;
    std::vector<std::pair<int32_t, Place>> inputs;  // the operands from outside the group, each where read
    for (size_t m : members) {  // ascending: m is the first member reading a new operand
      const std::vector<int32_t> ops = operands(m);
      for (size_t k = 0; k < ops.size(); ++k) {
        const int32_t operand = ops[k];
        const Place at = cats.count(m) ? Place{m, k} : place.at(m);
        if (internal.count(operand) || std::count(inputs.begin(), inputs.end(), std::make_pair(operand, at))) continue;
        // Through the view when its source holds at the root what the layout calls read; else
        // the calls stay and the group reads their output.
        auto th = through.find(operand);
        const Through* t =
            th != through.end() && steady(th->second.src, th->second.calls.front()) ? &th->second : nullptr;
        if (!t && !steady(operand, m)) return std::nullopt;
        std::optional<format::VkExprView> v;
        if (t) v = t->view, v->label = t->label;
        if (at != kOutput) {
          // In a cat's part: read at the part's place along the cat dim, unless the part
          // broadcasts it along that dim (one element there, or a lower rank).
          const Cat& cat = cats.at(at.first);
          const std::vector<int64_t>& cd = dims(ir.chain[at.first].args.back());
          const int64_t len = dims(cat.parts[at.second])[cat.dim];
          if (!v) v = contiguous_view(dims(operand));
          if (v->dims.size() > cd.size()) return std::nullopt;  // malformed: a part's terms broadcast up to it
          const int64_t e = cat.dim - static_cast<int64_t>(cd.size() - v->dims.size());
          if (e >= 0 && (v->dims[e] != 1 || len == 1)) {
            if (v->dims[e] != len) return std::nullopt;
            v->part = format::VkExprView::Part{static_cast<uint32_t>(e), cat.starts[at.second], cd[cat.dim]};
          } else if (!t) {
            v.reset();
          }
        }
        inputs.emplace_back(operand, at);
        p.reads.push_back(t ? t->src : operand);
        p.expr.views.push_back(std::move(v));
        if (t) p.absorbed.insert(t);
      }
    }
    size_t absorbed_calls = 0;
    for (const Through* t : p.absorbed) absorbed_calls += t->calls.size();
    // A cat alone is worth a kernel: its own builder makes a dispatch per part.
    const bool lone_cat = members.size() == 1 && cats.count(last);
    if (inputs.size() > kMaxFusedInputs || (members.size() + absorbed_calls < 2 && !lone_cat)) return std::nullopt;

    // The terms in member order; a cat of n parts is n - 1 two-way selects.
    std::map<int32_t, uint32_t> term_of;  // a member's output -> its (last) term
    auto ref = [&](int32_t id, Place at) -> format::VkExprOperand {
      if (auto t = term_of.find(id); t != term_of.end()) return {format::VkExprOperand::Kind::Term, t->second};
      const auto k = std::find(inputs.begin(), inputs.end(), std::make_pair(id, at)) - inputs.begin();
      return {format::VkExprOperand::Kind::Input, static_cast<uint32_t>(k)};
    };
    for (size_t m : members) {
      if (auto cat = cats.find(m); cat != cats.end()) {
        const Cat& c = cat->second;
        const size_t dim = static_cast<size_t>(c.dim) + od.size() - dims(ir.chain[m].args.back()).size();
        format::VkExprOperand acc = ref(c.parts[0], {m, 0});
        for (size_t k = 1; k < c.parts.size(); ++k) {
          format::VkExprTerm x;
          x.binary = true;
          x.a = acc;
          x.b = ref(c.parts[k], {m, k});
          x.split = format::VkExprTerm::Split{static_cast<uint32_t>(dim), c.starts[k]};
          x.label = "cat";
          p.expr.terms.push_back(std::move(x));
          acc = {format::VkExprOperand::Kind::Term, static_cast<uint32_t>(p.expr.terms.size() - 1)};
        }
      } else {
        const FusedTerm& t = *term[m];
        p.expr.terms.push_back(
            expr_term(t, ref(t.x, place.at(m)), t.binary && t.y >= 0 ? ref(t.y, place.at(m)) : format::VkExprOperand{}));
      }
      term_of[ir.chain[m].args.back()] = static_cast<uint32_t>(p.expr.terms.size() - 1);
    }
    // The kernel's output is what its reads broadcast to: through views, it must be the root's.
    if (plain_expression(p.expr)) return p;
    std::vector<int64_t> shape;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const auto& v = p.expr.views[k];
      std::vector<int64_t> d = v ? v->dims : dims(inputs[k].first);
      if (v && v->part) d[v->part->dim] = v->part->extent;
      if (d.size() > shape.size()) shape.insert(shape.begin(), d.size() - shape.size(), 1);
      for (size_t j = 0; j < d.size(); ++j) {
        int64_t& o = shape[shape.size() - d.size() + j];
        if (o != d[j] && o != 1 && d[j] != 1) return std::nullopt;
        o = o == 1 ? d[j] : o;
      }
    }
    if (shape != od) return std::nullopt;
    return p;
  };

  // Union each member with the single member consuming its output. Every member but one then
  // feeds exactly one other member: a group is a tree rooted at the call whose output leaves it
  // (never a cat: its reader is a term). A group with cats that cannot fuse is formed again
  // without the misplaced ones, or else without any, and the rest of it may fuse.
  std::vector<std::vector<size_t>> groups;
  std::vector<std::optional<Plan>> plans;
  for (bool again = true; again;) {
    again = false;
    std::vector<size_t> parent(n);
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](size_t i) {
      while (parent[i] != i) i = parent[i] = parent[parent[i]];
      return i;
    };
    for (size_t j = 0; j < n; ++j) {
      if (!member(j)) continue;
      for (int32_t operand : operands(j)) {
        if (ix.sole_reader(operand) != j) continue;
        const size_t i = ix.producer(operand);
        if (member(i)) parent[find(i)] = find(j);
      }
    }
    groups.assign(n, {});
    for (size_t i = 0; i < n; ++i)
      if (member(i)) groups[find(i)].push_back(i);
    plans.assign(n, std::nullopt);
    for (size_t root = 0; root < n; ++root) {
      std::vector<size_t> misplaced;
      if (groups[root].empty() || (plans[root] = plan(groups[root], &misplaced))) continue;
      for (size_t m : misplaced.empty() ? groups[root] : misplaced) again = cats.erase(m) > 0 || again;
    }
  }

  std::vector<bool> removed(n, false);
  std::vector<std::optional<format::VkOpCall>> replacement(n);
  for (size_t root = 0; root < n; ++root) {
    if (!plans[root]) continue;
    Plan& p = *plans[root];
    const std::vector<size_t>& members = groups[root];
    const size_t last = members.back();
    size_t absorbed_calls = 0;
    for (const Through* t : p.absorbed)
      for (size_t at : t->calls) removed[at] = true, ++absorbed_calls;
    format::VkOpCall call;
    call.node_id = ir.chain[last].node_id;
    call.name = kFusedOp;
    call.args = p.reads;
    call.args.push_back(add_expr(ir, std::move(p.expr)));
    call.args.push_back(ir.chain[last].args.back());
    for (size_t m : members) removed[m] = true;
    replacement[last] = std::move(call);
    ++stats.groups;
    stats.calls_removed += members.size() - 1 + absorbed_calls;
  }
  if (stats.groups) splice_calls(ir, removed, replacement);
  return stats;
}

}  // namespace etwebgpu::graph
