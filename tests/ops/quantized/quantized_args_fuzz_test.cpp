// Fuzzes the argument readers of the quantized operators on real exports (tests/fixtures/exports):
// one argument of one quantized call at a time is replaced (scales by 0, negative, NaN, infinite,
// denormal or huge values; zero points, group sizes and ints far out of range; IntLists emptied or
// made negative; strings unknown; tensors swapped for a tensor of another shape or dtype), and the
// graph is built and, when it builds, run on zero inputs. Each mutation must end in an
// etwebgpu::Error (a load or run error naming the problem) or in finite outputs: never a crash,
// another exception, or NaN / infinite output from an accepted argument. Deterministic (seeded).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "format/ir.h"
#include "gpu/context.h"
#include "graph/graph.h"
#include "program/program_graph.h"
#include "support/op_harness.h"

using namespace etwebgpu;

namespace {

const std::string kDir = ETWEBGPU_SOURCE_DIR "/tests/fixtures/exports/";

bool quantized_op(const std::string& n) {
  return n.rfind("et_vk.q8ta", 0) == 0 || n.rfind("quantized_decomposed.", 0) == 0 ||
         n.rfind("et_vk.linear_dq8ca", 0) == 0 || n.rfind("torchao.choose_qparams", 0) == 0;
}

// The merged IR of a fixture; its constants point into `program`, which must outlive it.
struct Loaded {
  format::Program program;
  format::VkGraphIR ir;
};
Loaded load_ir(const std::string& name) {
  std::ifstream f(kDir + name + "/model.pte", std::ios::binary);
  auto bytes = std::make_shared<const format::Bytes>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  Loaded l{format::read_program(bytes), {}};
  l.ir = graph::merge_program(l.program, l.program.plans.at(0)).ir;
  return l;
}

// Builds and runs `ir` on zero inputs. "" when it runs with finite outputs, "error: ..." for an
// etwebgpu::Error, "NONFINITE" for a NaN / infinite float output.
std::string build_and_run(const format::VkGraphIR& ir) {
  try {
    graph::Graph g(gpu::Context::get(), ir);
    for (size_t i = 0; i < g.input_ids().size(); ++i) {
      const auto& t = g.tensor(static_cast<int32_t>(g.input_ids()[i]));
      g.set_input(i, HostTensor(graph::host_dtype_of(t.dtype), t.max_dims));
    }
    std::vector<DType> dts;
    for (auto o : g.output_ids()) dts.push_back(graph::host_dtype_of(g.tensor(static_cast<int32_t>(o)).dtype));
    std::vector<HostTensor> out;
    g.execute_and_read(dts, out);
    for (const auto& t : out)
      for (double v : t.to_f64())
        if (!std::isfinite(v)) return "NONFINITE";
    return "";
  } catch (const Error& e) {
    return std::string("error: ") + e.what();
  }
}

std::vector<format::VkValue> mutations_of(const format::VkValue& v, const std::vector<format::VkValue>& tensors) {
  using K = format::VkValueKind;
  std::vector<format::VkValue> m;
  auto make = [](K k) { format::VkValue x; x.kind = k; return x; };
  switch (v.kind) {
    case K::Double:
      for (double d : {0.0, -0.25, std::nan(""), std::numeric_limits<double>::infinity(), 1e-300, 1e300}) {
        auto x = make(K::Double); x.double_val = d; m.push_back(x);
      }
      break;
    case K::Int:
      for (int64_t i : {int64_t(0), int64_t(-1), int64_t(-1000), int64_t(1000), int64_t(7), INT64_MAX}) {
        auto x = make(K::Int); x.int_val = i; m.push_back(x);
      }
      break;
    case K::IntList:
      for (std::vector<int64_t> l : {std::vector<int64_t>{}, {0, 0}, {-1, -1}, {1000000, 1}, {1, 1, 1}}) {
        auto x = make(K::IntList); x.ints = l; m.push_back(x);
      }
      break;
    case K::String:
      for (const char* s : {"", "gelu", "SYMMETRIC_NO_CLIPPING_ERR"}) { auto x = make(K::String); x.str = s; m.push_back(x); }
      break;
    case K::Tensor:
      for (const auto& t : tensors)
        if (t.tensor.dims != v.tensor.dims || t.tensor.dtype != v.tensor.dtype) m.push_back(t);
      break;
    default: break;
  }
  m.push_back(make(K::Null));
  return m;
}

void fuzz_fixture(const std::string& name, size_t samples) {
  auto loaded = load_ir(name);
  const auto& base = loaded.ir;
  ASSERT_EQ(build_and_run(base), "") << name << " must build and run unmutated";
  // Tensors to swap in: a few of the graph's own, of other shapes and dtypes (constants included).
  std::vector<format::VkValue> tensors;
  for (const auto& v : base.values)
    if (v.kind == format::VkValueKind::Tensor && tensors.size() < 6 &&
        (tensors.empty() || v.tensor.dtype != tensors.back().tensor.dtype || v.tensor.dims != tensors.back().tensor.dims))
      tensors.push_back(v);
  struct Site { size_t call, arg; };
  std::vector<Site> sites;
  for (size_t c = 0; c < base.chain.size(); ++c)
    if (quantized_op(base.chain[c].name))
      for (size_t a = 0; a + 1 < base.chain[c].args.size(); ++a) sites.push_back({c, a});
  ASSERT_FALSE(sites.empty()) << name << " has no quantized call";
  std::mt19937_64 rng(42);
  size_t errors = 0, ran = 0;
  for (size_t s = 0; s < samples; ++s) {
    Site site = sites[rng() % sites.size()];
    auto ir = base;
    auto& call = ir.chain[site.call];
    auto muts = mutations_of(ir.values[call.args[site.arg]], tensors);
    auto mv = muts[rng() % muts.size()];
    if (mv.kind == format::VkValueKind::Tensor) {
      // Swap in one of the graph's tensor values (by id) rather than a copy without storage.
      for (size_t i = 0; i < ir.values.size(); ++i)
        if (ir.values[i].kind == mv.kind && ir.values[i].tensor.dims == mv.tensor.dims &&
            ir.values[i].tensor.dtype == mv.tensor.dtype) { call.args[site.arg] = static_cast<int32_t>(i); break; }
    } else {
      ir.values.push_back(mv);  // only this call sees the new value
      call.args[site.arg] = static_cast<int32_t>(ir.values.size() - 1);
    }
    auto r = build_and_run(ir);
    EXPECT_NE(r, "NONFINITE") << name << ": " << call.name << " argument " << site.arg
                              << " mutated was accepted and produced a non-finite output";
    (r.empty() ? ran : errors)++;
  }
  ::testing::Test::RecordProperty("errors", static_cast<int>(errors));
  ::testing::Test::RecordProperty("ran", static_cast<int>(ran));
  EXPECT_GT(errors, samples / 4) << "most mutations of quantization parameters must be refused";
}

TEST(QuantizedArgsFuzz, StaticInt8CnnArgumentsFailCleanlyOrStayFinite) {
  ETW_REQUIRE_GPU();
  fuzz_fixture("q8_residual_cnn", 160);
}

TEST(QuantizedArgsFuzz, StaticInt8LinearArgumentsFailCleanlyOrStayFinite) {
  ETW_REQUIRE_GPU();
  fuzz_fixture("q8_linear_rows", 80);
}

TEST(QuantizedArgsFuzz, DynamicInt8Llama8da4wArgumentsFailCleanlyOrStayFinite) {
  ETW_REQUIRE_GPU();
  fuzz_fixture("llama_8da4w_kv_decode", 80);
}

}  // namespace
