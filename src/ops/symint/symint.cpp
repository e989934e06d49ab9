// SymInt producers: sym_size.int, Python SymInt arithmetic (add/sub/mul/floordiv) and
// et_vk.select_as_symint. They dispatch nothing: each computes its SymInt on the host from the
// resize hook, so later nodes (which resize in chain order) see the new value in their hooks,
// uniforms and grids. Buffers keep their serialized size and are never reallocated.
#include <limits>

#include "ops/op_common.h"

namespace etwebgpu::ops {
namespace {

void require_symint_out(const OpContext& oc) {
  if (oc.g.kind(oc.out()) != format::VkValueKind::SymInt)
    oc.fail(ErrorKind::Format, "output must be a SymInt, got " +
                                   std::string(format::vk_value_kind_name(oc.g.kind(oc.out()))));
}

// Operand of SymInt arithmetic: Int, integral Double or SymInt (read live at resize time).
void require_int_operand(const OpContext& oc, int32_t id, const char* what) {
  auto k = oc.g.kind(id);
  if (k != format::VkValueKind::Int && k != format::VkValueKind::SymInt && k != format::VkValueKind::Double)
    oc.fail(ErrorKind::Format, std::string(what) + " must be an Int or SymInt, got " + format::vk_value_kind_name(k));
  oc.g.integer(id);  // rejects a fractional Double at load
}

void build_sym_size(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  require_symint_out(oc);
  int64_t rank = g.tensor(x).rank();
  int64_t dim = norm_dim(oc, g.integer(oc.arg(1)), rank);
  if (rank == 0) oc.fail(ErrorKind::InvalidArgument, "sym_size of a 0-dim tensor");
  oc.node.resize = [&g, x, out, dim] { g.set_symint(out, g.tensor(x).dims[dim]); };
}

enum class Arith { Add, Sub, Mul, FloorDiv };

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;  // Python rounds toward -inf
  return q;
}

template <Arith OP>
void build_arith(OpContext& oc) {
  Graph& g = oc.g;
  int32_t a = oc.arg(0), b = oc.arg(1), out = oc.out();
  require_symint_out(oc);
  require_int_operand(oc, a, "a");
  require_int_operand(oc, b, "b");
  std::string name = oc.call.name + " (node " + std::to_string(oc.call.node_id) + ")";
  oc.node.resize = [&g, a, b, out, name] {
    int64_t x = g.integer(a), y = g.integer(b), r = 0;
    switch (OP) {
      case Arith::Add: r = x + y; break;
      case Arith::Sub: r = x - y; break;
      case Arith::Mul: r = x * y; break;
      case Arith::FloorDiv:
        if (y == 0) throw Error(ErrorKind::InvalidArgument, name + ": SymInt floordiv by zero");
        r = floor_div(x, y);
        break;
    }
    g.set_symint(out, r);
  };
}

// Element i of integer graph input x: from the run's host upload (Graph::input_bytes) where the
// host holds it, else read back from the GPU (a synchronous round trip: it waits for every run
// queued before). Int32 words, or int8 bytes packed four to a word.
int64_t input_element(Graph& g, int32_t x, const gpu::Buffer& buf, bool bytes, uint64_t i) {
  if (bytes) {
    int8_t e = 0;
    if (!g.input_bytes(x, i, 1, &e)) {
      uint32_t word = 0;
      g.ctx().read(buf, i / 4 * 4, &word, 4);
      e = static_cast<int8_t>(word >> (8 * (i % 4)));
    }
    return e;
  }
  int32_t e = 0;
  if (!g.input_bytes(x, i * 4, 4, &e)) g.ctx().read(buf, i * 4, &e, 4);
  return e;
}

// An integer graph input, which the SymInt ops below read on the host.
void require_int_input(const OpContext& oc, int32_t x) {
  require_dtype(oc, x, {VkDType::Int32, VkDType::Int64, VkDType::Int8}, "x");
  bool is_input = false;
  for (auto id : oc.g.input_ids()) is_input = is_input || static_cast<int32_t>(id) == x;
  if (!is_input) oc.fail(ErrorKind::Unsupported, "x must be a graph input (its value is read back from the host upload)");
  if (oc.g.tensor(x).rank() == 0) oc.fail(ErrorKind::InvalidArgument, "x must have at least one dim");
}

// et_vk.select_as_symint [x, dim, index, out]: out = x.select(dim, index).item() for an integer
// graph input. The resize hook takes the element from the run's host upload (Graph::input_bytes);
// only where the host does not hold it (a large input, or one whose buffer keeps what queued work
// wrote) is it read back from the GPU, which waits for every run queued before: a decode step's
// position read that way kept generate from queueing the next step while the GPU ran this one.
void build_select_as_symint(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  require_symint_out(oc);
  require_int_input(oc, x);
  int64_t rank = g.tensor(x).rank();
  int64_t dim = norm_dim(oc, g.integer(oc.arg(1)), rank);
  int32_t index_id = oc.arg(2);
  g.integer(index_id);  // Int or SymInt; checked again with the live size at resize
  std::string name = oc.call.name + " (node " + std::to_string(oc.call.node_id) + ")";
  const gpu::Buffer* buf = &g.buffer(x);
  const bool bytes = kernel::is_bytes(g.tensor(x).storage);
  oc.node.resize = [&g, x, out, dim, index_id, buf, bytes, name] {
    const Tensor& t = g.tensor(x);
    int64_t n = t.dims[dim];
    int64_t idx = g.integer(index_id);
    if (idx < -n || idx >= n)
      throw Error(ErrorKind::InvalidArgument, name + ": index " + std::to_string(idx) + " out of range for dim " +
                                                  std::to_string(dim) + " of size " + std::to_string(n));
    if (idx < 0) idx += n;
    // The remaining dims are taken at 0: the selected slice must hold exactly one element.
    if (t.numel() != n)
      throw Error(ErrorKind::InvalidArgument, name + ": x " + shape_str(t.dims) +
                                                  " must have exactly one element per index along dim " +
                                                  std::to_string(dim));
    const int64_t v = input_element(g, x, *buf, bytes, static_cast<uint64_t>(idx));
    g.set_symint(out, v);
  };
}

// etwebgpu.position_rows [x, index, count, rows, out]: the first of the rows x[index] + 0 ..
// count - 1 of a dim of `rows` rows, for a gather at those positions made a slice
// (ops/indexing/position_window.cpp). Each position follows aten.index's rule (negative counts from
// the end); one outside [-rows, rows), or a window crossing 0 (not one slice), is the index op's
// error. x is a 1-D integer graph input, read on the host like select_as_symint's.
void build_position_rows(OpContext& oc) {
  Graph& g = oc.g;
  int32_t x = oc.arg(0), out = oc.out();
  require_symint_out(oc);
  require_int_input(oc, x);
  if (g.tensor(x).rank() != 1) oc.fail(ErrorKind::InvalidArgument, "x must be 1-D, got " + shape_str(g.tensor(x).dims));
  const int32_t index_id = oc.arg(1), count_id = oc.arg(2);
  require_int_operand(oc, index_id, "index");
  require_int_operand(oc, count_id, "count");
  const int64_t rows = g.integer(oc.arg(3));
  if (rows < 1) oc.fail(ErrorKind::InvalidArgument, "rows must be positive, got " + std::to_string(rows));
  const std::string name = oc.call.name + " (node " + std::to_string(oc.call.node_id) + ")";
  const gpu::Buffer* buf = &g.buffer(x);
  const bool bytes = kernel::is_bytes(g.tensor(x).storage);
  oc.node.resize = [&g, x, out, index_id, count_id, rows, buf, bytes, name] {
    const int64_t n = g.tensor(x).dims[0], idx = g.integer(index_id), count = g.integer(count_id);
    if (idx < -n || idx >= n)
      throw Error(ErrorKind::InvalidArgument, name + ": index " + std::to_string(idx) + " out of range for dim 0 of size " +
                                                  std::to_string(n));
    const int64_t p = input_element(g, x, *buf, bytes, static_cast<uint64_t>(idx < 0 ? idx + n : idx));
    const int64_t last = p + std::max<int64_t>(count, 1) - 1;
    auto fail = [&](const std::string& why) {
      throw Error(ErrorKind::InvalidArgument, name + ", the rows at positions " + std::to_string(p) + " .. " +
                                                  std::to_string(last) + " of a gather: " + why);
    };
    // The first position outside [-rows, rows).
    if (p < -rows || last >= rows)
      fail("index " + std::to_string(p < -rows ? p : std::max(p, rows)) + " is out of bounds for dimension 0 with size " +
           std::to_string(rows));
    if (p < 0 && last >= 0) fail("they cross 0 (not one slice)");
    g.set_symint(out, p < 0 ? p + rows : p);
  };
}

ETW_REGISTER_OP("sym_size.int", build_sym_size);
ETW_REGISTER_OP("add", build_arith<Arith::Add>);
ETW_REGISTER_OP("sub", build_arith<Arith::Sub>);
ETW_REGISTER_OP("mul", build_arith<Arith::Mul>);
ETW_REGISTER_OP("floordiv", build_arith<Arith::FloorDiv>);
ETW_REGISTER_OP("et_vk.select_as_symint.default", build_select_as_symint);
ETW_REGISTER_OP("etwebgpu.position_rows", build_position_rows);

}  // namespace
}  // namespace etwebgpu::ops
