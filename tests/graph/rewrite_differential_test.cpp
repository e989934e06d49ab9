// A randomized differential test of the load-time rewrite pipeline (graph/rewrite_pipeline.h,
// docs/REWRITES.md). A deterministic generator (fixed seeds) builds a few hundred small graphs out
// of what the passes rewrite -- float elementwise chains and trees, layout calls and cats between
// them, linears, convolutions and matmuls that take epilogues, layer norms before linears,
// constant-only subgraphs, duplicate calls, permutes and their inverses -- and out of what must
// stop them: in-place copy_ writes between two reads, values read twice or leaving the graph
// mid-chain, tensors packed or aliased into one delegate memory object. Each graph is loaded with
// rewrites on and off (LoadOptions::fuse), and the test proves that
//   - both load and run (a graph that loads in neither mode is a generator bug, and fails too),
//   - every output is the same within a few ulps (fusion and epilogues run the unfused kernels'
//     f32 math, which the shader compiler may contract across terms; constant evaluation the same
//     kernels, CSE and permute folding no arithmetic at all), or within 1e-5 relative in a graph
//     with a layer norm (its fusion into the linear normalizes inside the GEMM),
//   - the rewritten graph dispatches no more kernels than the plain one,
// and prints the dispatch totals and how often each feature and each kind of fused kernel came up.
// A failure prints the seed, the graph as a list of calls and what the mismatch depends on.
// ETWEBGPU_DIFFTEST_SEED=N runs and prints graph N alone; ETWEBGPU_DIFFTEST_GRAPHS=N runs graphs
// 1..N instead of the default. The mismatches the generator found are reduced to the
// RewriteDifferentialRepro tests at the end of the file, which keep them fixed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

// ---------------------------------------------------------------------------------------------
// A graph as data: built twice (fuse on / off) from the same description, and printable.

struct Arg {
  enum Kind { Tensor, Int, Dbl, Bool, Null, Str, Ints, Tensors } kind = Null;
  int64_t i = 0;  // Tensor: index into GraphSpec::tensors; Int; Bool
  double d = 0;
  std::string s;
  std::vector<int64_t> ints;  // Ints; Tensors: indices into GraphSpec::tensors
};
Arg T(int t) { Arg a; a.kind = Arg::Tensor; a.i = t; return a; }
Arg I(int64_t v) { Arg a; a.kind = Arg::Int; a.i = v; return a; }
Arg D(double v) { Arg a; a.kind = Arg::Dbl; a.d = v; return a; }
Arg B(bool v) { Arg a; a.kind = Arg::Bool; a.i = v; return a; }
Arg N() { return Arg{}; }
Arg S(std::string v) { Arg a; a.kind = Arg::Str; a.s = std::move(v); return a; }
Arg L(std::vector<int64_t> v) { Arg a; a.kind = Arg::Ints; a.ints = std::move(v); return a; }
Arg TL(std::vector<int64_t> t) { Arg a; a.kind = Arg::Tensors; a.ints = std::move(t); return a; }

struct TensorSpec {
  enum Kind { Input, Constant, Temp } kind = Temp;
  std::vector<int64_t> dims;
  uint64_t seed = 0;  // data of an input or constant
  float lo = -1, hi = 1;
  int mem = -1;       // delegate memory object of a Temp (-1: storage of its own)
  bool output = false;
};

struct CallSpec {
  std::string op;
  std::vector<Arg> args;  // schema arguments, then the output
};

std::string dims_text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t k = 0; k < d.size(); ++k) s += (k ? "," : "") + std::to_string(d[k]);
  return s + "]";
}

struct GraphSpec {
  std::vector<TensorSpec> tensors;
  std::vector<CallSpec> calls;
  std::vector<int> outputs;      // tensors marked as graph outputs, in order
  std::set<std::string> features;  // what the graph exercises, for the coverage count
  bool exact = true;             // false (a layer norm): compare within 1e-5 relative

  void build(OpGraph& g) const {
    std::vector<Id> id(tensors.size());
    for (size_t k = 0; k < tensors.size(); ++k) {
      const TensorSpec& t = tensors[k];
      if (t.kind == TensorSpec::Input) id[k] = g.input(random_f32(t.dims, t.seed, t.lo, t.hi));
      else if (t.kind == TensorSpec::Constant) id[k] = g.constant(random_f32(t.dims, t.seed, t.lo, t.hi));
      else id[k] = g.gb.tensor(DType::Float32, t.dims, t.mem);
    }
    auto& gb = g.gb;
    for (const CallSpec& c : calls) {
      std::vector<Id> args;
      for (const Arg& a : c.args) switch (a.kind) {
          case Arg::Tensor: args.push_back(id[a.i]); break;
          case Arg::Int: args.push_back(gb.int_(a.i)); break;
          case Arg::Dbl: args.push_back(gb.dbl(a.d)); break;
          case Arg::Bool: args.push_back(gb.boolean(a.i != 0)); break;
          case Arg::Null: args.push_back(gb.null()); break;
          case Arg::Str: args.push_back(gb.str(a.s)); break;
          case Arg::Ints: args.push_back(gb.int_list(a.ints)); break;
          case Arg::Tensors: {
            std::vector<Id> list;
            for (int64_t t : a.ints) list.push_back(id[t]);
            args.push_back(gb.value_list(list));
            break;
          }
        }
      gb.op(c.op, args);
    }
    for (int o : outputs) gb.output(id[o]);
  }

  std::string name(int t) const {
    const TensorSpec& s = tensors[t];
    return (s.kind == TensorSpec::Input ? "in" : s.kind == TensorSpec::Constant ? "c" : "t") + std::to_string(t);
  }

  std::string with_dims(int t) const {
    std::string s = name(t) + dims_text(tensors[t].dims);
    return tensors[t].mem >= 0 ? s + "@m" + std::to_string(tensors[t].mem) : s;
  }

  // One line per tensor that is not a temp, then one per call: "t5[2,3]@m1 = aten.add.Tensor(t3,
  // in0, 1)", @mK naming the delegate memory object (a graph output's is dropped at load).
  std::string text() const {
    std::ostringstream o;
    for (size_t k = 0; k < tensors.size(); ++k) {
      const TensorSpec& t = tensors[k];
      if (t.kind == TensorSpec::Temp) continue;
      o << "  " << name(static_cast<int>(k)) << dims_text(t.dims) << " = "
        << (t.kind == TensorSpec::Input ? "input" : "constant") << " random(seed " << t.seed << ", " << t.lo << ".."
        << t.hi << ")\n";
    }
    for (const CallSpec& c : calls) {
      const Arg& out = c.args.back();
      o << "  ";
      if (out.kind == Arg::Tensors)
        for (size_t k = 0; k < out.ints.size(); ++k)
          o << (k ? ", " : "(") << with_dims(static_cast<int>(out.ints[k])) << (k + 1 == out.ints.size() ? ")" : "");
      else
        o << with_dims(static_cast<int>(out.i));
      o << " = " << c.op << "(";
      for (size_t k = 0; k + 1 < c.args.size(); ++k) {
        const Arg& a = c.args[k];
        if (k) o << ", ";
        switch (a.kind) {
          case Arg::Tensor: o << name(static_cast<int>(a.i)); break;
          case Arg::Int: o << a.i; break;
          case Arg::Dbl: o << a.d; break;
          case Arg::Bool: o << (a.i ? "true" : "false"); break;
          case Arg::Null: o << "None"; break;
          case Arg::Str: o << '"' << a.s << '"'; break;
          case Arg::Ints: o << dims_text(a.ints); break;
          case Arg::Tensors:
            for (size_t j = 0; j < a.ints.size(); ++j) o << (j ? ", " : "(") << name(static_cast<int>(a.ints[j]));
            o << ")";
            break;
        }
      }
      o << ")\n";
    }
    o << "  outputs:";
    for (int t : outputs) o << " " << name(t);
    o << "\n";
    return o.str();
  }
};

// ---------------------------------------------------------------------------------------------
// The generator: each step appends one call (or a short motif) reading recent values, so chains
// form; older values are read too, so some values have two readers.

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed * 0x9E3779B97F4A7C15ull + 1), seed_(seed) {}

  GraphSpec generate() {
    // Per graph, which hazards it may contain: most graphs are clean so the passes fire.
    share_memory_ = chance(0.3);
    in_place_ = chance(0.3);
    pool_.push_back(new_input(random_dims()));
    const int steps = uni(3, 10);
    for (int s = 0; s < steps; ++s) step();
    // Every temp nothing reads leaves the graph (else its calls would be dead).
    for (size_t k = 0; k < g_.tensors.size(); ++k) {
      const TensorSpec& t = g_.tensors[k];
      if (t.kind == TensorSpec::Temp && !read_[k] && !t.output && !scratch_[k]) mark_output(static_cast<int>(k));
      if (t.output && read_[k]) g_.features.insert("output mid-chain");
      if (read_[k] >= 2) g_.features.insert("value read twice");
    }
    return g_;
  }

 private:
  std::mt19937_64 rng_;
  uint64_t seed_;
  GraphSpec g_;
  std::vector<int> pool_;   // float tensors later calls may read, oldest first
  std::vector<int> read_;   // by tensor: how many calls read it
  std::vector<char> scratch_;  // by tensor: an output nobody reads by design (layer norm's statistics)
  // By tensor: a conv / GEMM result, a view of one, or an elementwise op of those: what an
  // epilogue may take. Each distinct epilogue is a GEMM or conv shader of its own (about a second
  // of lavapipe's compiler the first time), so ops on these come from a short list: the graphs
  // stay random in shapes, data and hazards and the test stays fast on a cold shader cache.
  std::vector<char> epilogue_;
  int next_mem_ = 0;
  uint64_t next_data_seed_ = 1;
  bool share_memory_ = false, in_place_ = false;
  int next_operand_ = -1;  // a motif's choice of the next operand

  // mt19937_64's sequence is fixed by the standard; the std distributions' are not, so the
  // graphs are drawn with these.
  int uni(int lo, int hi) { return lo + static_cast<int>(rng_() % static_cast<uint64_t>(hi - lo + 1)); }
  bool chance(double p) { return static_cast<double>(rng_() >> 11) * 0x1.0p-53 < p; }
  template <class V>
  void shuffle(V& v) {
    for (size_t k = v.size(); k > 1; --k) std::swap(v[k - 1], v[static_cast<size_t>(uni(0, static_cast<int>(k) - 1))]);
  }
  template <class V>
  const typename V::value_type& pick(const V& v) {
    return v[static_cast<size_t>(uni(0, static_cast<int>(v.size()) - 1))];
  }
  const std::vector<int64_t>& dims(int t) const { return g_.tensors[t].dims; }
  static int64_t numel_of(const std::vector<int64_t>& d) {
    return std::accumulate(d.begin(), d.end(), int64_t{1}, std::multiplies<int64_t>());
  }

  std::vector<int64_t> random_dims(int min_rank = 1, int max_rank = 4) {
    for (;;) {
      std::vector<int64_t> d(static_cast<size_t>(uni(min_rank, max_rank)));
      for (auto& x : d) x = chance(0.15) ? 1 : uni(2, 8);
      if (numel_of(d) <= 256) return d;
    }
  }

  int add_tensor(TensorSpec t) {
    g_.tensors.push_back(std::move(t));
    read_.push_back(0);
    epilogue_.push_back(0);
    scratch_.push_back(0);
    return static_cast<int>(g_.tensors.size() - 1);
  }
  int new_data(TensorSpec::Kind kind, std::vector<int64_t> d, float lo = -1, float hi = 1) {
    TensorSpec t;
    t.kind = kind;
    t.dims = std::move(d);
    t.seed = seed_ * 1000 + next_data_seed_++;
    t.lo = lo, t.hi = hi;
    return add_tensor(std::move(t));
  }
  int new_input(std::vector<int64_t> d, float lo = -1, float hi = 1) {
    return new_data(TensorSpec::Input, std::move(d), lo, hi);
  }
  int new_constant(std::vector<int64_t> d, float lo = -1, float hi = 1) {
    return new_data(TensorSpec::Constant, std::move(d), lo, hi);
  }
  int new_operand(std::vector<int64_t> d, float lo = -1, float hi = 1) {
    if (chance(0.5)) return new_input(std::move(d), lo, hi);
    g_.features.insert("constant operand");
    return new_constant(std::move(d), lo, hi);
  }

  // The delegate memory object a new temp may share: another temp of its dims that the call
  // writing it does not read (a kernel reading and writing one buffer through two bindings is
  // not what a delegate writes). Whether their lives meet (aliasing) or not (packing) is up to
  // the calls that follow.
  int new_temp(std::vector<int64_t> d, const std::vector<int>& reads) {
    TensorSpec t;
    t.dims = std::move(d);
    if (share_memory_ && chance(0.35)) {
      std::vector<int> candidates;
      for (size_t k = 0; k < g_.tensors.size(); ++k) {
        const TensorSpec& c = g_.tensors[k];
        if (c.kind != TensorSpec::Temp || c.dims != t.dims) continue;
        bool clash = false;
        for (int r : reads)
          clash = clash || r == static_cast<int>(k) ||
                  (c.mem >= 0 && g_.tensors[r].kind == TensorSpec::Temp && g_.tensors[r].mem == c.mem);
        if (!clash) candidates.push_back(static_cast<int>(k));
      }
      if (!candidates.empty()) {
        int c = pick(candidates);
        if (g_.tensors[c].mem < 0) g_.tensors[c].mem = next_mem_++;
        t.mem = g_.tensors[c].mem;
        g_.features.insert("shared memory object");
      }
    }
    int id = add_tensor(std::move(t));
    if (chance(0.08)) mark_output(id);  // read later too, most likely: an output mid-chain
    return id;
  }

  void mark_output(int t) {
    g_.tensors[t].output = true;
    g_.outputs.push_back(t);
  }

  void emit(std::string op, std::vector<Arg> args) {
    std::set<int64_t> reads;
    for (size_t k = 0; k + 1 < args.size(); ++k) {
      if (args[k].kind == Arg::Tensor) reads.insert(args[k].i);
      if (args[k].kind == Arg::Tensors) reads.insert(args[k].ints.begin(), args[k].ints.end());
    }
    for (int64_t t : reads) ++read_[t];
    g_.calls.push_back({std::move(op), std::move(args)});
  }

  // A value to read: usually one of the last three (chains), sometimes any (second readers).
  int operand() {
    if (int t = next_operand_; t >= 0) {
      next_operand_ = -1;
      return t;
    }
    if (chance(0.07)) {
      int t = new_input(random_dims());
      pool_.push_back(t);
      return t;
    }
    size_t n = pool_.size();
    if (n > 3 && chance(0.7)) return pool_[n - 1 - static_cast<size_t>(uni(0, 2))];
    return pick(pool_);
  }
  // A pool value whose dims satisfy `ok` (the motif's choice first), or -1.
  int operand_where(const std::function<bool(const std::vector<int64_t>&)>& ok) {
    if (int t = next_operand_; t >= 0 && ok(dims(t))) {
      next_operand_ = -1;
      return t;
    }
    std::vector<int> c;
    for (int t : pool_)
      if (ok(dims(t))) c.push_back(t);
    if (c.empty()) return -1;
    // The most recent fitting value half the time: producers then read chains' ends.
    return chance(0.5) ? c.back() : pick(c);
  }

  int push(int t) {
    pool_.push_back(t);
    return t;
  }

  // --- the steps ---
  void step() {
    int w = uni(0, 99);
    if (w < 24) return unary();
    if (w < 48) return binary();
    if (w < 62) return layout();
    if (w < 70) return producer();
    if (w < 76) return constant_subgraph();
    if (w < 83 && in_place_) return copy_into();
    if (w < 89) return duplicate();
    if (w < 93) return permute_and_back();
    if (w < 95) return layer_norm();
    if (w < 97) return rms_norm();
    return producer_view_consumer();
  }

  void unary() {
    int x = operand();
    static const char* ops[] = {"relu", "neg", "exp", "sigmoid", "silu", "gelu", "tanh", "abs", "clamp", "hardswish"};
    std::string op = epilogue_[x] ? (chance(0.85) ? "relu" : "gelu") : ops[uni(0, 9)];
    std::vector<Arg> args{T(x)};
    if (op == "gelu") args.push_back(S(epilogue_[x] || chance(0.5) ? "none" : "tanh"));
    if (op == "clamp") {
      int form = uni(0, 2);  // both bounds, no min, no max
      double lo = uni(-8, 0) / 8.0, hi = uni(1, 8) / 8.0;
      args.push_back(form == 1 ? N() : D(lo));
      args.push_back(form == 2 ? N() : D(hi));
    }
    int out = new_temp(dims(x), {x});
    epilogue_[out] = epilogue_[x];
    args.push_back(T(out));
    g_.features.insert("unary");
    emit("aten." + op + ".default", args);
    push(out);
  }

  static std::vector<int64_t> broadcast(std::vector<int64_t> a, std::vector<int64_t> b) {
    if (a.size() < b.size()) std::swap(a, b);
    std::vector<int64_t> r = a;
    size_t off = a.size() - b.size();
    for (size_t k = 0; k < b.size(); ++k) r[off + k] = std::max(a[off + k], b[k]);
    return r;
  }
  static bool broadcastable(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    size_t n = std::min(a.size(), b.size());
    for (size_t k = 1; k <= n; ++k) {
      int64_t x = a[a.size() - k], y = b[b.size() - k];
      if (x != y && x != 1 && y != 1) return false;
    }
    return true;
  }
  // A shape that broadcasts against d: its last dim, d with some dims 1, one element, or d
  // with a leading dim (the result then widens past d).
  std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& d) {
    int form = uni(0, 9);
    if (form < 3) return {d.back()};
    if (form < 7) {
      std::vector<int64_t> r = d;
      for (auto& x : r)
        if (chance(0.5)) x = 1;
      return r;
    }
    if (form < 9 || d.size() >= 4 || numel_of(d) > 80) return {1};
    std::vector<int64_t> r = d;
    r.insert(r.begin(), uni(2, 3));
    return r;
  }

  void binary() {
    int a = operand();
    if (epilogue_[a]) return epilogue_binary(a);
    static const char* ops[] = {"add", "sub", "mul", "div"};
    std::string op = ops[uni(0, 3)];
    int form = uni(0, 19);
    if (form < 5) {  // a Python scalar
      double s = uni(1, 16) / 4.0 * (chance(0.3) ? -1 : 1);
      std::vector<Arg> args{T(a), D(s)};
      if (op == "add" || op == "sub") args.push_back(chance(0.5) ? I(1) : D(0.5));
      int out = new_temp(dims(a), {a});
      args.push_back(T(out));
      g_.features.insert("binary with scalar");
      emit("aten." + op + ".Scalar", args);
      push(out);
      return;
    }
    int b;
    // A divisor is fresh data away from zero: the result stays finite.
    if (op == "div") {
      b = new_operand(form < 12 ? dims(a) : broadcast_shape(dims(a)), 0.5f, 2.f);
      if (dims(b) != dims(a)) g_.features.insert("broadcast operand");
    } else if (form < 11) {  // a value of the same dims from the pool, else fresh
      std::vector<int> same;
      for (int t : pool_)
        if (dims(t) == dims(a) && !epilogue_[t]) same.push_back(t);
      b = same.size() > 1 || (same.size() == 1 && chance(0.2)) ? pick(same) : new_operand(dims(a));
      if (b == a) g_.features.insert("binary of one value");
    } else if (form < 17) {
      b = new_operand(broadcast_shape(dims(a)));
      g_.features.insert("broadcast operand");
    } else {  // another value of the pool that broadcasts
      b = operand_where([&](const std::vector<int64_t>& d) { return d != dims(a) && broadcastable(d, dims(a)); });
      if (b >= 0 && epilogue_[b]) b = -1;
      if (b < 0) b = new_operand(broadcast_shape(dims(a)));
      g_.features.insert("broadcast operand");
    }
    if (op != "div" && chance(0.3)) std::swap(a, b);
    std::vector<Arg> args{T(a), T(b)};
    if (op == "add" || op == "sub") args.push_back(chance(0.6) ? I(1) : D(chance(0.5) ? 0.5 : -2.0));
    std::vector<int64_t> od = broadcast(dims(a), dims(b));
    if (od != dims(a) && od != dims(b)) g_.features.insert("broadcast both ways");
    int out = new_temp(od, {a, b});
    args.push_back(T(out));
    g_.features.insert("binary with tensors");
    emit("aten." + op + ".Tensor", args);
    push(out);
  }

  // The binary ops an epilogue may take (see epilogue_): a scalar multiply, an add of a fresh
  // tensor of its dims or one that broadcasts (either side), rarely the value times itself.
  void epilogue_binary(int a) {
    const int form = uni(0, 19);
    if (form < 8) {
      int out = new_temp(dims(a), {a});
      g_.features.insert("binary with scalar");
      emit("aten.mul.Scalar", {T(a), D(uni(-8, 8) / 4.0), T(out)});
      epilogue_[push(out)] = 1;
    } else if (form < 19) {
      int b = new_operand(form < 14 ? dims(a) : broadcast_shape(dims(a)));
      if (dims(b) != dims(a)) g_.features.insert("broadcast operand");
      int out = new_temp(broadcast(dims(a), dims(b)), {a, b});
      g_.features.insert("binary with tensors");
      const bool swap = chance(0.1);
      emit("aten.add.Tensor", {T(swap ? b : a), T(swap ? a : b), chance(0.6) ? I(1) : D(0.5), T(out)});
      epilogue_[push(out)] = 1;
    } else {
      int out = new_temp(dims(a), {a});
      g_.features.insert("binary of one value");
      emit("aten.mul.Tensor", {T(a), T(a), T(out)});
      epilogue_[push(out)] = 1;
    }
  }

  void layout() {
    int x = operand();
    const std::vector<int64_t> d = dims(x);
    const int r = static_cast<int>(d.size());
    int form = uni(0, 11);
    if (form == 0 && r >= 2) {
      std::vector<int64_t> p(static_cast<size_t>(r));
      std::iota(p.begin(), p.end(), 0);
      shuffle(p);
      std::vector<int64_t> od;
      for (int64_t k : p) od.push_back(d[k]);
      if (chance(0.2)) p[0] -= r;  // a negative dim
      int out = new_temp(od, {x});
      g_.features.insert("permute_copy");
      emit("aten.permute_copy.default", {T(x), L(p), T(out)});
      push(out);
      return;
    }
    if (form == 1) {
      std::vector<int64_t> od;
      int how = uni(0, 3);
      if (how == 0 || r == 1) od = {numel_of(d)};
      else if (how == 1) {  // merge two neighbours
        int k = uni(0, r - 2);
        od = d;
        od[k] *= od[k + 1];
        od.erase(od.begin() + k + 1);
      } else if (how == 2 && r < 4) {  // a leading 1
        od = d;
        od.insert(od.begin(), 1);
      } else {  // split the first dim that factors
        od = d;
        for (int k = 0; k < r; ++k)
          if (r < 4 && od[k] % 2 == 0 && od[k] > 2) {
            od[k] /= 2;
            od.insert(od.begin() + k, 2);
            break;
          }
      }
      int out = new_temp(od, {x});
      epilogue_[out] = epilogue_[x];
      g_.features.insert("view_copy");
      emit("aten.view_copy.default", {T(x), L(od), T(out)});
      push(out);
      return;
    }
    if (form == 2) {
      int out = new_temp(d, {x});
      epilogue_[out] = epilogue_[x];
      g_.features.insert("clone");
      emit("aten.clone.default", {T(x), N(), T(out)});
      push(out);
      return;
    }
    if (form == 3 && r < 4) {
      int at = uni(0, r);
      std::vector<int64_t> od = d;
      od.insert(od.begin() + at, 1);
      int out = new_temp(od, {x});
      epilogue_[out] = epilogue_[x];
      g_.features.insert("unsqueeze_copy");
      emit("aten.unsqueeze_copy.default", {T(x), I(chance(0.3) ? at - r - 1 : at), T(out)});
      push(out);
      return;
    }
    if (form == 4 && r >= 2) {
      std::vector<int64_t> sq, od;
      for (int k = 0; k < r; ++k) {
        bool drop = d[k] == 1 && static_cast<int>(sq.size()) < r - 1;
        if (drop || (d[k] != 1 && chance(0.2))) sq.push_back(k);  // a dim that is not 1 stays
        if (!drop) od.push_back(d[k]);
      }
      if (!sq.empty() && od.size() < d.size()) {
        int out = new_temp(od, {x});
        epilogue_[out] = epilogue_[x];
        g_.features.insert("squeeze_copy");
        emit("aten.squeeze_copy.dims", {T(x), L(sq), T(out)});
        push(out);
        return;
      }
    }
    if (form == 5) {
      std::vector<int> dims_ok;
      for (int k = 0; k < r; ++k)
        if (d[k] >= 2) dims_ok.push_back(k);
      if (!dims_ok.empty()) {
        int k = pick(dims_ok);
        const int size = static_cast<int>(d[k]), start = uni(0, size - 1), end = uni(start + 1, size);
        int64_t step = chance(0.3) ? uni(2, 3) : 1;
        std::vector<int64_t> od = d;
        od[k] = (end - start + step - 1) / step;
        int out = new_temp(od, {x});
        g_.features.insert("slice_copy");
        // The same bounds as PyTorch may be written: from the end, past it, or None.
        Arg a = start == 0 && chance(0.2) ? N() : chance(0.3) ? I(start - size) : I(start);
        Arg b = end == size && chance(0.3) ? (chance(0.5) ? N() : I(INT64_MAX))
                : end < size && chance(0.3) ? I(end - size)
                                            : I(end);
        if (start == 0 && chance(0.2)) a = I(-100);  // clamps to 0
        if ((a.kind == Arg::Int && a.i < 0) || b.kind != Arg::Int || b.i != end) g_.features.insert("slice bounds past or from the end");
        emit("aten.slice_copy.Tensor", {T(x), chance(0.3) ? I(k - r) : I(k), a, b, I(step), T(out)});
        push(out);
        return;
      }
    }
    if (form == 6 && r >= 2) {
      int k = uni(0, r - 1);
      int64_t index = uni(0, static_cast<int>(d[k]) - 1);
      if (chance(0.2)) index -= d[k];
      std::vector<int64_t> od = d;
      od.erase(od.begin() + k);
      int out = new_temp(od, {x});
      g_.features.insert("select_copy");
      emit("aten.select_copy.int", {T(x), I(k), I(index), T(out)});
      push(out);
      return;
    }
    if (form == 7) {  // dims of one element broadcast, maybe under a new leading dim
      std::vector<int64_t> size(d.begin(), d.end()), od = d;
      bool any = false;
      for (size_t k = 0; k < d.size(); ++k) {
        if (d[k] == 1 && chance(0.7)) od[k] = uni(2, 4), any = true;
        size[k] = od[k] == d[k] && chance(0.5) ? -1 : od[k];
      }
      if ((!any || chance(0.3)) && r < 4 && numel_of(od) <= 64) {
        od.insert(od.begin(), uni(2, 3));
        size.insert(size.begin(), od[0]);
      }
      if (numel_of(od) <= 512) {
        int out = new_temp(od, {x});
        g_.features.insert("expand_copy");
        emit("aten.expand_copy.default", {T(x), L(size), B(false), T(out)});
        push(out);
        return;
      }
    }
    if (form == 8 && r >= 2) {
      const bool t = r == 2 && chance(0.6);
      const int a = t ? 0 : uni(0, r - 1), b = t ? 1 : uni(0, r - 1);
      std::vector<int64_t> od = d;
      std::swap(od[a], od[b]);
      int out = new_temp(od, {x});
      if (t) {
        g_.features.insert("t_copy");
        emit("aten.t_copy.default", {T(x), T(out)});
      } else {
        g_.features.insert("transpose_copy");
        emit("aten.transpose_copy.int", {T(x), I(chance(0.3) ? a - r : a), I(b), T(out)});
      }
      push(out);
      return;
    }
    if (form == 9) {
      std::vector<int64_t> dims;
      for (int k = 0; k < r; ++k)
        if (chance(0.5)) dims.push_back(chance(0.3) ? k - r : k);
      if (dims.empty()) dims.push_back(r - 1);
      int out = new_temp(d, {x});
      g_.features.insert("flip");
      emit("aten.flip.default", {T(x), L(dims), T(out)});
      push(out);
      return;
    }
    if (form == 10) {
      const int k = uni(0, r - 1), size = static_cast<int>(d[k]);
      const int start = uni(0, size - 1), len = uni(1, size - start);
      std::vector<int64_t> od = d;
      od[k] = len;
      int out = new_temp(od, {x});
      g_.features.insert("narrow_copy");
      emit("aten.narrow_copy.default", {T(x), I(k), I(chance(0.3) ? start - size : start), I(len), T(out)});
      push(out);
      return;
    }
    if (form == 11) {  // a cat: x's slices swapped (rotate_half, maybe with a neg), or x and another value
      const int k = uni(0, r - 1);
      std::vector<int64_t> parts;
      if (d[k] >= 2 && chance(0.6)) {
        const int64_t cut = uni(1, static_cast<int>(d[k]) - 1);
        std::vector<int64_t> ld = d, hd = d;
        ld[k] = cut, hd[k] = d[k] - cut;
        int lo = new_temp(ld, {x}), hi = new_temp(hd, {x});
        emit("aten.slice_copy.Tensor", {T(x), I(k), I(0), I(cut), I(1), T(lo)});
        emit("aten.slice_copy.Tensor", {T(x), I(k), I(cut), I(INT64_MAX), I(1), T(hi)});
        if (chance(0.5)) {
          int n = new_temp(hd, {hi});
          emit("aten.neg.default", {T(hi), T(n)});
          hi = n;
        }
        parts = {hi, lo};
        g_.features.insert("cat of swapped slices");
      } else {
        std::vector<int64_t> od = d;
        od[k] = uni(1, 3);
        int y = new_operand(od);
        parts = chance(0.5) ? std::vector<int64_t>{x, y} : std::vector<int64_t>{y, x, chance(0.3) ? x : y};
        g_.features.insert("cat of values");
      }
      std::vector<int64_t> od = d;
      od[k] = 0;
      std::vector<int> reads;
      for (int64_t p : parts) od[k] += dims(static_cast<int>(p))[k], reads.push_back(static_cast<int>(p));
      int out = new_temp(od, reads);
      emit("aten.cat.default", {TL(parts), I(chance(0.3) ? k - r : k), T(out)});
      push(out);
      if (chance(0.7)) {  // read by an elementwise op: the cat may be read in place
        next_operand_ = out;
        chance(0.5) ? unary() : binary();
      }
      return;
    }
    // The form did not fit the rank: a clone.
    int out = new_temp(d, {x});
    epilogue_[out] = epilogue_[x];
    g_.features.insert("clone");
    emit("aten.clone.default", {T(x), N(), T(out)});
    push(out);
  }

  void producer() {
    int form = uni(0, 11);
    if (form < 5) return linear();
    if (form < 7) return convolution();
    return matmul(form < 9 ? "aten.bmm.default" : form < 11 ? "aten.mm.default" : "aten.matmul.default");
  }

  // GEMM operands are mostly vec4-aligned (K and N multiples of 4): each of a GEMM's routes with
  // an epilogue is a shader of its own, and the epilogue tests cover every route already.
  std::vector<int64_t> gemm_input(int min_rank, int max_rank, bool aligned) {
    std::vector<int64_t> d = random_dims(min_rank - 1, max_rank - 1);
    if (numel_of(d) > 32) d = {uni(2, 6)};
    d.push_back(aligned ? 4 * uni(1, 4) : uni(2, 8));
    return d;
  }

  void linear() {
    const bool aligned = chance(0.8);
    int x = operand_where([&](const std::vector<int64_t>& d) {
      return d.size() >= 2 && d.size() <= 3 && d.back() <= 32 && (!aligned || d.back() % 4 == 0);
    });
    if (x < 0) x = push(new_input(gemm_input(2, 3, aligned)));
    const std::vector<int64_t> d = dims(x);
    int64_t K = d.back(), Nout = aligned ? 4 * uni(1, 3) : uni(2, 12);
    int w = new_constant({Nout, K}, -0.5f, 0.5f);
    bool bias = chance(0.5);
    std::vector<int64_t> od = d;
    od.back() = Nout;
    int out = new_temp(od, {x});
    g_.features.insert(bias ? "linear with bias" : "linear without bias");
    emit("aten.linear.default", {T(x), T(w), bias ? T(new_constant({Nout})) : N(), T(out)});
    epilogue_[push(out)] = 1;
  }

  void convolution() {
    int x = operand_where([](const std::vector<int64_t>& d) {
      return d.size() == 4 && d[0] <= 2 && d[1] <= 8 && d[2] >= 3 && d[3] >= 3 && d[2] <= 10 && d[3] <= 10;
    });
    if (x < 0) x = push(new_input({1, uni(1, 6), uni(3, 8), uni(3, 8)}));
    const std::vector<int64_t> d = dims(x);
    const int64_t C = d[1];
    const bool depthwise = C > 1 && chance(0.5);
    const int64_t groups = depthwise ? C : 1, Co = depthwise ? C : uni(2, 8);
    const int64_t k = chance(0.5) ? 3 : 1, stride = chance(0.25) ? 2 : 1, pad = k == 3 && chance(0.7) ? 1 : 0;
    int w = new_constant({Co, C / groups, k, k}, -0.4f, 0.4f);
    bool bias = chance(0.6);
    std::vector<int64_t> od = {d[0], Co, (d[2] + 2 * pad - k) / stride + 1, (d[3] + 2 * pad - k) / stride + 1};
    int out = new_temp(od, {x});
    g_.features.insert(depthwise ? "depthwise convolution" : "convolution");
    emit("aten.convolution.default", {T(x), T(w), bias ? T(new_constant({Co})) : N(), L({stride, stride}),
                                      L({pad, pad}), L({1, 1}), B(false), L({0, 0}), I(groups), T(out)});
    epilogue_[push(out)] = 1;
  }

  // bmm [B,M,K] x [B,K,N], mm and matmul [M,K] x [K,N]; the second operand fresh or from the pool.
  void matmul(const std::string& op) {
    const bool bmm = op == "aten.bmm.default", aligned = chance(0.8);
    int x = operand_where([&](const std::vector<int64_t>& d) {
      return d.size() == (bmm ? 3u : 2u) && d.back() <= 32 && (!aligned || d.back() % 4 == 0);
    });
    if (x < 0) x = push(new_input(bmm ? std::vector<int64_t>{uni(1, 3), uni(1, 6), aligned ? 4 * uni(1, 3) : uni(2, 8)}
                                      : std::vector<int64_t>{uni(1, 6), aligned ? 4 * uni(1, 3) : uni(2, 8)}));
    const std::vector<int64_t> d = dims(x);
    std::vector<int64_t> wd = d;
    wd[wd.size() - 2] = d.back();
    wd.back() = aligned ? 4 * uni(1, 2) : uni(2, 8);
    int y = operand_where([&](const std::vector<int64_t>& e) {
      return e.size() == wd.size() && e[e.size() - 2] == d.back() && (e.size() == 2 || e[0] == d[0]) &&
             (!aligned || e.back() % 4 == 0);
    });
    if (y < 0 || chance(0.5)) y = new_operand(wd, -0.5f, 0.5f);
    std::vector<int64_t> od = d;
    od.back() = dims(y).back();
    int out = new_temp(od, {x, y});
    g_.features.insert(op.substr(5, op.find('.', 5) - 5));
    emit(op, {T(x), T(y), T(out)});
    epilogue_[push(out)] = 1;
  }

  // Calls that read only constants: arange, full, ones, zeros, then maybe an op over them; the
  // result joins the pool with the dims of a pool value (or its last dim), so others read it.
  void constant_subgraph() {
    const std::vector<int64_t> like = dims(pick(pool_));
    int form = uni(0, 3);
    int out;
    if (form == 0) {
      const int64_t n = like.back(), start = uni(-2, 2);
      out = new_temp({n}, {});
      emit("aten.arange.start_step", {I(start), I(start + n), I(1), N(), N(), N(), B(false), T(out)});
      g_.features.insert("arange");
    } else if (form == 1) {
      out = new_temp(like, {});
      emit("aten.full.default", {L(like), D(uni(-8, 8) / 4.0), N(), N(), N(), B(false), T(out)});
      g_.features.insert("full");
    } else {
      out = new_temp(like, {});
      emit(form == 2 ? "aten.ones.default" : "aten.zeros.default", {L(like), N(), N(), N(), N(), T(out)});
      g_.features.insert(form == 2 ? "ones" : "zeros");
    }
    if (chance(0.6)) {  // an op over constants only, with a constant tensor or a scalar
      const std::vector<int64_t> od = dims(out);
      int next = new_temp(od, {out});
      if (chance(0.5)) emit("aten.mul.Tensor", {T(out), T(new_constant(od)), T(next)});
      else emit("aten.add.Scalar", {T(out), D(0.5), I(1), T(next)});
      out = next;
      g_.features.insert("op over constants");
    }
    push(out);
  }

  // native_layer_norm over the last dim, its statistics scratch, then (usually) a linear reading
  // only the normalized value: the pair the layer_norm+linear pass fuses, which normalizes inside
  // the GEMM's loads and so agrees within rounding only: the graph is compared with a tolerance.
  void layer_norm() {
    // The pass takes K a multiple of 4 (the GEMM's vector loads).
    int x = operand_where([](const std::vector<int64_t>& d) {
      return d.size() >= 2 && d.size() <= 3 && d.back() % 4 == 0 && d.back() <= 32;
    });
    if (x < 0) {
      std::vector<int64_t> d = random_dims(1, 2);
      d.push_back(4 * uni(1, 4));
      x = push(new_input(d));
    }
    const std::vector<int64_t> d = dims(x);
    std::vector<int64_t> sd = d;
    sd.back() = 1;
    const int64_t K = d.back();
    bool affine = chance(0.7);
    Arg w = affine ? T(new_constant({K})) : N(), b = affine ? T(new_constant({K})) : N();
    // Outputs of one call never share a memory object (two writable bindings of one buffer).
    int y = new_temp(d, {x}), mean = new_temp(sd, {x, y}), rstd = new_temp(sd, {x, y, mean});
    scratch_[mean] = scratch_[rstd] = 1;
    emit("aten.native_layer_norm.default", {T(x), L({K}), w, b, D(1e-5), TL({y, mean, rstd})});
    g_.features.insert("layer_norm");
    g_.exact = false;
    if (chance(0.7)) {  // y stays out of the pool: the linear is its one reader
      next_operand_ = y;
      linear();
    } else {
      push(y);
    }
  }

  // et_vk.rms_norm over the last dim, weighted or not; half the time of a select_copy of a value
  // whose dims before the selected one are 1 (the last position's row before a Llama's final
  // norm), the pair norm_selects reads in place.
  void rms_norm() {
    int x = -1;
    if (chance(0.5)) {
      int v = operand_where([](const std::vector<int64_t>& d) { return d.size() >= 2 && d[0] == 1 && d.back() <= 32; });
      if (v < 0) v = push(new_input({1, uni(1, 5), uni(1, 3) * 4 + uni(0, 1)}));
      const std::vector<int64_t> d = dims(v);
      int64_t index = uni(0, static_cast<int>(d[1]) - 1);
      if (chance(0.3)) index -= d[1];
      std::vector<int64_t> od = d;
      od.erase(od.begin() + 1);
      x = new_temp(od, {v});
      emit("aten.select_copy.int", {T(v), I(1), I(index), T(x)});
      g_.features.insert("rms_norm of a select");
    } else {
      x = operand_where([](const std::vector<int64_t>& d) { return !d.empty() && d.back() <= 32; });
      if (x < 0) x = push(new_input(random_dims(1, 3)));
    }
    const int64_t K = dims(x).back();
    int y = new_temp(dims(x), {x});
    emit("et_vk.rms_norm.default", {T(x), chance(0.7) ? T(new_constant({K})) : N(), D(1e-5), T(y)});
    g_.features.insert("rms_norm");
    push(y);
  }

  // A producer, a contiguous view of its result, then an elementwise op reading the view: the
  // epilogue pass moves the op into the producer across the view.
  void producer_view_consumer() {
    producer();
    const int p = pool_.back();
    std::vector<int64_t> vd = dims(p);
    const int form = uni(0, 2);
    if (form < 2) vd.insert(vd.begin(), 1);
    int v = new_temp(vd, {p});
    epilogue_[v] = epilogue_[p];
    if (form == 0) emit("aten.view_copy.default", {T(p), L(vd), T(v)});
    else if (form == 1) emit("aten.unsqueeze_copy.default", {T(p), I(0), T(v)});
    else emit("aten.clone.default", {T(p), N(), T(v)});
    push(v);
    g_.features.insert("producer, view, elementwise");
    next_operand_ = v;
    chance(0.5) ? unary() : binary();
  }

  // copy_(t, src): t holds src's values from here on; earlier readers saw the old ones.
  void copy_into() {
    std::vector<int> targets;
    for (int t : pool_)
      if (g_.tensors[t].kind == TensorSpec::Temp && read_[t]) targets.push_back(t);
    if (targets.empty()) return unary();
    int t = pick(targets);
    std::vector<int> sources;
    for (int s : pool_)
      if (s != t && dims(s) == dims(t) &&
          !(g_.tensors[s].kind == TensorSpec::Temp && g_.tensors[t].mem >= 0 && g_.tensors[s].mem == g_.tensors[t].mem))
        sources.push_back(s);
    int src = !sources.empty() && chance(0.6) ? pick(sources) : new_input(dims(t));
    g_.features.insert("copy_ between reads");
    emit("aten.copy_.default", {T(t), T(src), B(false), T(t)});
    if (chance(0.4) && !g_.tensors[t].output) mark_output(t);
  }

  // The same call again, into a new tensor: CSE's case (or not, when something wrote its inputs).
  void duplicate() {
    std::vector<size_t> pure;
    for (size_t k = 0; k < g_.calls.size(); ++k)
      if (g_.calls[k].op != "aten.copy_.default" && g_.calls[k].args.back().kind == Arg::Tensor) pure.push_back(k);
    if (pure.empty()) return unary();
    CallSpec c = g_.calls[pick(pure)];
    std::vector<int> reads;
    for (size_t k = 0; k + 1 < c.args.size(); ++k)
      if (c.args[k].kind == Arg::Tensor) reads.push_back(static_cast<int>(c.args[k].i));
    const int original = static_cast<int>(c.args.back().i);
    int out = new_temp(dims(original), reads);
    epilogue_[out] = epilogue_[original];
    c.args.back() = T(out);
    g_.features.insert("duplicate call");
    emit(c.op, c.args);
    push(out);
  }

  // permute then its inverse: folded to a copy-free clone.
  void permute_and_back() {
    int x = operand_where([](const std::vector<int64_t>& d) { return d.size() >= 2; });
    if (x < 0) return layout();
    const std::vector<int64_t> d = dims(x);
    std::vector<int64_t> p(d.size()), inv(d.size());
    std::iota(p.begin(), p.end(), 0);
    shuffle(p);
    for (size_t k = 0; k < p.size(); ++k) inv[p[k]] = static_cast<int64_t>(k);
    std::vector<int64_t> md;
    for (int64_t k : p) md.push_back(d[k]);
    int mid = new_temp(md, {x});
    emit("aten.permute_copy.default", {T(x), L(p), T(mid)});
    int out = new_temp(d, {mid});
    emit("aten.permute_copy.default", {T(mid), L(inv), T(out)});
    g_.features.insert("permute and its inverse");
    push(mid);
    push(out);
  }
};

// ---------------------------------------------------------------------------------------------
// Running and comparing.

// Under ETWEBGPU_TEST_PRECISION=fp16 only the plain run rounds its intermediates to f16: the modes
// then agree within half precision, as in the other fusion tests.
bool half_precision() {
  const char* p = std::getenv("ETWEBGPU_TEST_PRECISION");
  return p && std::string(p) == "fp16";
}

// "" when equal: within a few ulps (any NaN equals any NaN: the shader compiler may contract or
// refold the fused terms, RewriteDifferentialRepro below), or when !exact within 1e-5 relative
// (and 1e-5 absolute, for values a chain cancelled to near zero).
std::string difference(const HostTensor& fused, const HostTensor& plain, bool exact) {
  const double tol = half_precision() ? 2e-2 : 1e-5;
  exact = exact && !half_precision();
  if (fused.shape != plain.shape) return "shape " + dims_text(fused.shape) + " vs " + dims_text(plain.shape);
  if (fused.dtype != plain.dtype || fused.data.size() != plain.data.size()) return "dtype or size differs";
  const float* f = fused.as<float>();
  const float* p = plain.as<float>();
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < plain.numel(); ++i) {
    bool same;
    if (std::isnan(f[i]) || std::isnan(p[i])) same = std::isnan(f[i]) && std::isnan(p[i]);
    else if (f[i] == p[i]) same = true;  // infinities too, whose difference is NaN
    else if (exact)  // 4 ulps, or 1e-6 where a term cancelled the rest to near zero
      same = std::fabs(f[i] - p[i]) <= 4 * std::fabs(std::nextafter(p[i], INFINITY) - p[i]) || std::fabs(f[i] - p[i]) <= 1e-6;
    else same = std::fabs(f[i] - p[i]) <= tol * std::fabs(p[i]) + tol;
    if (!same && bad++ == 0) first = i;
  }
  if (!bad) return "";
  std::ostringstream o;
  o.precision(9);
  o << bad << " of " << plain.numel() << " elements differ; first at " << first << ": fused " << f[first] << ", plain "
    << p[first];
  return o.str();
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// A fused elementwise kernel's label names the layout calls it reads through first.
bool reads_through_view(const std::string& label) {
  static const std::set<std::string> layouts = {"permute", "t", "transpose", "slice", "narrow", "select", "expand",
                                                "unsqueeze", "squeeze", "view", "_unsafe_view", "flip", "clone"};
  return layouts.count(label.substr(6, label.find_first_of("+]") - 6)) > 0;
}

struct Outcome {
  bool ran = false;           // both modes loaded and ran
  bool generator_bug = false;  // neither mode loaded
  std::string failure;        // a mismatch between the modes ("" when none)
  size_t fused_dispatches = 0, plain_dispatches = 0;
  std::vector<std::string> fused_ops, fused_variants;
  bool within_rounding = false;  // the outputs that differ agree within 1e-5 relative
};

Outcome run_both(const GraphSpec& spec) {
  Outcome r;
  auto build = [&](OpGraph& g) { spec.build(g); };
  LoadedGraph fused, plain;
  std::string fused_error, plain_error;
  try {
    fused = load_graph(build, true);
  } catch (const std::exception& e) {
    fused_error = e.what();
  }
  try {
    plain = load_graph(build, false);
  } catch (const std::exception& e) {
    plain_error = e.what();
  }
  if (!fused_error.empty() && !plain_error.empty()) {
    r.generator_bug = true;
    r.failure = "neither mode loads (a generator bug): " + plain_error;
    return r;
  }
  if (!fused_error.empty() || !plain_error.empty()) {
    r.failure = fused_error.empty() ? "only the plain graph fails: " + plain_error
                                    : "only the rewritten graph fails: " + fused_error;
    return r;
  }
  r.ran = true;
  r.fused_dispatches = fused.ops.size();
  r.plain_dispatches = plain.ops.size();
  r.fused_ops = fused.ops;
  r.fused_variants = fused.variants;
  std::ostringstream o;
  if (fused.out.size() != plain.out.size()) o << fused.out.size() << " outputs vs " << plain.out.size() << "\n";
  bool differs = false;
  r.within_rounding = fused.out.size() == plain.out.size();
  for (size_t k = 0; k < std::min(fused.out.size(), plain.out.size()); ++k) {
    std::string d = difference(fused.out[k], plain.out[k], spec.exact);
    if (d.empty()) continue;
    o << "output " << k << " (" << spec.name(spec.outputs[k]) << "): " << d << "\n";
    differs = true;
    r.within_rounding = r.within_rounding && difference(fused.out[k], plain.out[k], false).empty();
  }
  r.within_rounding = r.within_rounding && differs;
  if (fused.ops.size() > plain.ops.size())
    o << "the rewritten graph dispatches more kernels: " << fused.ops.size() << " > " << plain.ops.size() << "\n";
  if (!o.str().empty())
    r.failure = o.str() + "plain dispatches: " + join(plain.ops) + "\nfused dispatches: " + join(fused.ops);
  return r;
}

// What a mismatch depends on, for its report: whether it stays when no tensor shares a memory
// object, and whether it is within rounding.
std::string hints(const GraphSpec& spec, const Outcome& r) {
  if (r.generator_bug) return "";
  std::string h;
  if (r.within_rounding) h += "(every difference is within 1e-5 relative: rounding)\n";
  bool shared = false;
  for (const auto& t : spec.tensors) shared = shared || t.mem >= 0;
  if (shared) {
    GraphSpec alone = spec;
    for (auto& t : alone.tensors) t.mem = -1;
    h += run_both(alone).failure.empty() ? "(without memory objects the modes agree: aliasing)\n"
                                         : "(without memory objects the modes still disagree)\n";
  }
  return h;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// The number of graphs: every feature comes up several times. On lavapipe (2 cores) they run
// in about 5 s with Mesa's shader cache warm and 50 s with it empty: each new fused kernel is a
// shader compile.
constexpr int kGraphs = 250;

TEST(RewriteDifferential, RandomGraphsGiveTheSameResultsWithAndWithoutRewrites) {
  ETW_REQUIRE_GPU();
  const int only = env_int("ETWEBGPU_DIFFTEST_SEED", 0);
  const int graphs = env_int("ETWEBGPU_DIFFTEST_GRAPHS", kGraphs);
  const auto start = std::chrono::steady_clock::now();
  int ran = 0, generator_bugs = 0, mismatches = 0, rewritten = 0;
  size_t fused_total = 0, plain_total = 0;
  std::map<std::string, int> feature_graphs, fused_kinds;
  std::vector<int> failing;
  for (int seed = only ? only : 1; seed <= (only ? only : graphs); ++seed) {
    const GraphSpec spec = Generator(static_cast<uint64_t>(seed)).generate();
    if (only) std::printf("seed %d:\n%s", seed, spec.text().c_str());
    const Outcome r = run_both(spec);
    if (r.generator_bug) ++generator_bugs;
    if (!r.failure.empty()) {
      if (!r.generator_bug) {
        ++mismatches;
        failing.push_back(seed);
      }
      ADD_FAILURE() << "seed " << seed << ": " << r.failure << "\ngraph:\n" << spec.text() << hints(spec, r);
    }
    if (!r.ran) continue;
    ++ran;
    fused_total += r.fused_dispatches;
    plain_total += r.plain_dispatches;
    rewritten += r.fused_dispatches < r.plain_dispatches;
    for (const auto& f : spec.features) ++feature_graphs[f];
    // A fused elementwise kernel has no variant; a producer with an epilogue has its own and is
    // named first; a layer norm joined to its linear is an op of its own (with an epilogue too).
    for (size_t k = 0; k < r.fused_ops.size(); ++k) {
      const std::string& op = r.fused_ops[k];
      if (op == "etwebgpu.layer_norm_linear" || op == "etwebgpu.layer_norm_addmm") ++fused_kinds["layer_norm"];
      else if (op == "etwebgpu.rms_norm_select") ++fused_kinds["rms_norm_select"];
      else if (op.rfind("fused[", 0) == 0)
        ++fused_kinds[!r.fused_variants[k].empty() ? op.substr(6, op.find_first_of("+]") - 6)
                      : ("+" + op.substr(6)).find("+cat+") != std::string::npos ? "elementwise reading a cat in place"
                      : reads_through_view(op)               ? "elementwise through a view"
                                                             : "elementwise"];
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("rewrite differential: %d of %d graphs ran in %.1f s; %d with fewer dispatches rewritten; dispatches "
              "rewritten %zu vs plain %zu; %d mismatches%s\n",
              ran, only ? 1 : graphs, seconds, rewritten, fused_total, plain_total, mismatches,
              failing.empty() ? "" : " (seeds below)");
  for (int s : failing) std::printf("  failing seed %d\n", s);
  std::printf("  graphs per feature:");
  for (const auto& [f, n] : feature_graphs) std::printf(" %s %d;", f.c_str(), n);
  std::printf("\n  fused dispatches by kind:");
  for (const auto& [f, n] : fused_kinds) std::printf(" %s %d;", f.c_str(), n);
  std::printf("\n");
  if (only) return;
  // The generator writes graphs the runtime loads: nearly all of them run, or the test would
  // prove nothing.
  EXPECT_EQ(generator_bugs, 0);
  EXPECT_GE(ran, graphs * 98 / 100);
  // Every feature the generator covers shows up in many graphs, and the passes do rewrite.
  for (const char* f : {"unary", "binary with scalar", "binary with tensors", "broadcast operand", "value read twice",
                        "output mid-chain", "permute_copy", "view_copy", "clone", "unsqueeze_copy", "squeeze_copy",
                        "slice_copy", "select_copy", "linear with bias", "linear without bias", "convolution",
                        "depthwise convolution", "bmm", "mm", "matmul", "arange", "full", "ones", "zeros",
                        "op over constants", "copy_ between reads", "shared memory object", "duplicate call",
                        "permute and its inverse", "constant operand", "layer_norm", "rms_norm", "rms_norm of a select",
                        "producer, view, elementwise"})
    EXPECT_GE(feature_graphs[f], 4) << f;
  EXPECT_LT(fused_total, plain_total);
  for (const char* kind : {"elementwise", "linear", "convolution", "bmm", "mm", "matmul", "layer_norm", "rms_norm_select"})
    EXPECT_GT(fused_kinds[kind], 0) << kind;
}

// ---------------------------------------------------------------------------------------------
// Mismatches the generator found, reduced (seeds of ETWEBGPU_DIFFTEST_GRAPHS=5000), and fixed.
// Each loads one small graph both ways; the plain run is the meaning (one kernel per exported op).

::testing::AssertionResult AgreeToUlps(const LoadedGraph& fused, const LoadedGraph& plain) {
  std::ostringstream o;
  for (size_t k = 0; k < plain.out.size(); ++k)
    if (std::string d = difference(fused.out[k], plain.out[k], true); !d.empty())
      o << "output " << k << ": " << d << "; ";
  if (o.str().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << o.str() << "fused dispatches: " << join(fused.ops);
}

// Found by 14 seeds, 150 (of the default 250), 369, 575, 1830 ... (1 ulp in some elements). The
// fused kernel evaluates its terms as one WGSL function, and the shader compiler (Mesa's NIR under
// lavapipe here) applies inexact algebra across what were separate kernels: x*y + x may become
// x*(y + 1), exp(c*x) folds c into exp2's scale. The unfused kernels round each result to f32 in
// memory, so the bits may differ, by an ulp or so: in the elementwise pass (graph/fusion.cpp,
// ops/elementwise/fused.cpp) and in epilogues (ops/epilogue.cpp). The modes agree within ulps.
TEST(RewriteDifferentialRepro, FusedTermsAgreeWithinUlpsWhenTheCompilerRefoldsThem) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({64}, 1, -4.f, 4.f), y = random_f32({64}, 2, -4.f, 4.f);
  // mul then add reading the mul's operand: fused[mul+add].
  auto mul_add = [&](OpGraph& g) {
    Id xi = g.input(x), t = g.tensor(DType::Float32, {64});
    g.gb.op("aten.mul.Tensor", {xi, g.input(y), t});
    g.gb.op("aten.add.Tensor", {t, xi, g.gb.int_(1), g.output(DType::Float32, {64})});
  };
  // a scalar multiply then exp: fused[mul+exp].
  auto scale_exp = [&](OpGraph& g) {
    Id t = g.tensor(DType::Float32, {64});
    g.gb.op("aten.mul.Scalar", {g.input(x), g.gb.dbl(-0.75), t});
    g.gb.op("aten.exp.default", {t, g.output(DType::Float32, {64})});
  };
  // linear, then l * l + l as its epilogue: fused[linear+mul+add].
  auto linear_epilogue = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id l = g.tensor(DType::Float32, {8, 8}), m = g.tensor(DType::Float32, {8, 8});
    gb.op("aten.linear.default", {g.input(random_f32({8, 6}, 3)), g.constant(random_f32({8, 6}, 4)), gb.null(), l});
    gb.op("aten.mul.Tensor", {l, l, m});
    gb.op("aten.add.Tensor", {m, l, gb.int_(1), g.output(DType::Float32, {8, 8})});
  };
  for (const auto& build : std::vector<std::function<void(OpGraph&)>>{mul_add, scale_exp}) {
    auto fused = load_graph(build, true), plain = load_graph(build, false);
    ASSERT_EQ(fused.ops.size(), 1u);
    EXPECT_TRUE(AgreeToUlps(fused, plain));
  }
  auto fused = load_graph(linear_epilogue, true), plain = load_graph(linear_epilogue, false);
  ASSERT_EQ(fused.ops, std::vector<std::string>{"fused[linear+mul+add]"});
  EXPECT_TRUE(AgreeToUlps(fused, plain));
}

// Delegate memory objects whose tensors' lives meet are one storage (graph/memory_plan.h: "the
// delegate aliased them"); split_packed_memory keeps them together, and the plain run writes
// both names into one buffer. A pass that removes the call writing one of them removes a write
// the other name reads: UseDef::sole_reader / internal ask only who names the tensor, not who
// else lives in its storage, and CSE's "written once" does not look at the storage either.
// Found by 47 seeds, 289, 450, 667 ... (elementwise fusion) and 727, 1124, 1619 ... (constant
// evaluation); the epilogue, CSE and permute-folding cases are the same gap, written by hand.

// a@m0 = exp(x); b@m0 = neg(x) (overwrites a); o = a * b. Plain: o = (-x) * (-x). Elementwise
// fusion makes neg + mul one kernel, b is never written and a keeps exp(x).
TEST(RewriteDifferentialRepro, ElementwiseFusionKeepsAWriteToAliasedStorage) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({8}, 5);
  auto build = [&](OpGraph& g) {
    Id xi = g.input(x), a = g.gb.tensor(DType::Float32, {8}, 0), b = g.gb.tensor(DType::Float32, {8}, 0);
    g.gb.op("aten.exp.default", {xi, a});
    g.gb.op("aten.neg.default", {xi, b});
    g.gb.op("aten.mul.Tensor", {a, b, g.output(DType::Float32, {8})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  std::vector<double> square;
  for (double v : f64(x)) square.push_back(v * v);
  EXPECT_TRUE(Close(plain.out[0], ref_tensor({8}, square), 0, 1e-6));  // the aliased meaning
  EXPECT_TRUE(AgreeToUlps(fused, plain));
}

// a@m0 = relu(x); c@m0 = full(2) (overwrites a); o = a + c. Plain: o = 4. Constant evaluation
// makes c a constant of its own, so a keeps relu(x).
TEST(RewriteDifferentialRepro, ConstantEvaluationKeepsAWriteToAliasedStorage) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({8}, 6);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id a = gb.tensor(DType::Float32, {8}, 0), c = gb.tensor(DType::Float32, {8}, 0);
    gb.op("aten.relu.default", {g.input(x), a});
    gb.op("aten.full.default", {gb.int_list({8}), gb.dbl(2.0), gb.null(), gb.null(), gb.null(), gb.boolean(false), c});
    gb.op("aten.add.Tensor", {a, c, gb.int_(1), g.output(DType::Float32, {8})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_TRUE(Close(plain.out[0], ref_tensor({8}, std::vector<double>(8, 4.0)), 0, 0));
  EXPECT_TRUE(AgreeToUlps(fused, plain));
}

// w@m0 = exp(x) read twice later; l@m0 = linear(y) (overwrites w); relu(l). Plain: neg(w) and
// abs(w) read l's values. The epilogue pass moves the linear into the relu and writes the relu's
// output directly: l is never written and w keeps exp(x).
TEST(RewriteDifferentialRepro, EpilogueFusionKeepsAWriteToAliasedStorage) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({2, 4}, 7), y = random_f32({2, 3}, 8), w = random_f32({4, 3}, 9);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id e = gb.tensor(DType::Float32, {2, 4}, 0), l = gb.tensor(DType::Float32, {2, 4}, 0);
    gb.op("aten.exp.default", {g.input(x), e});
    gb.op("aten.linear.default", {g.input(y), g.constant(w), gb.null(), l});
    gb.op("aten.neg.default", {e, g.output(DType::Float32, {2, 4})});
    gb.op("aten.abs.default", {e, g.output(DType::Float32, {2, 4})});
    gb.op("aten.relu.default", {l, g.output(DType::Float32, {2, 4})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_NE(fused.ops.back(), "fused[linear+relu]");  // l's write stays
  // The aliased meaning: neg(w) is -l wherever relu(l) = l.
  for (int i = 0; i < 8; ++i)
    if (plain.out[2].as<float>()[i] > 0) {
      EXPECT_EQ(plain.out[0].as<float>()[i], -plain.out[2].as<float>()[i]);
    }
  EXPECT_TRUE(AgreeToUlps(fused, plain));
}

// p@m0 = neg(x); e1 = exp(p); q@m0 = abs(x) (overwrites p; read twice, so it stays a call of its
// own); e2 = exp(p); o = e1 - e2. Plain: o = exp(-x) - exp(|x|). CSE sees exp(p) twice with p
// written once and merges them: o = 0 wherever x > 0. (q must not be a graph output: the
// delegate's outputs are program values and lose their memory object at load,
// program/program_graph.cpp.)
TEST(RewriteDifferentialRepro, CseDoesNotMergeReadsAcrossAWriteToAliasedStorage) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({8}, 10);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id xi = g.input(x), p = gb.tensor(DType::Float32, {8}, 0), q = gb.tensor(DType::Float32, {8}, 0);
    Id e1 = g.tensor(DType::Float32, {8}), e2 = g.tensor(DType::Float32, {8});
    gb.op("aten.neg.default", {xi, p});
    gb.op("aten.exp.default", {p, e1});
    gb.op("aten.abs.default", {xi, q});
    gb.op("aten.exp.default", {p, e2});
    gb.op("aten.sub.Tensor", {e1, e2, gb.int_(1), g.output(DType::Float32, {8})});
    gb.op("aten.neg.default", {q, g.output(DType::Float32, {8})});
    gb.op("aten.abs.default", {q, g.output(DType::Float32, {8})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  std::vector<double> expected;
  for (double v : f64(x)) expected.push_back(std::exp(-v) - std::exp(std::fabs(v)));
  EXPECT_TRUE(Close(plain.out[0], ref_tensor({8}, expected), 1e-6, 1e-5));  // the aliased meaning
  EXPECT_TRUE(AgreeToUlps(fused, plain));
}

// w@m0 = exp(x) read twice later; m@m0 = permute(y) (overwrites w); z = permute back(m). Plain:
// neg(w) reads y transposed. Permute folding makes z a clone of y and drops the first permute, so
// m is never written and w keeps exp(x).
TEST(RewriteDifferentialRepro, PermuteFoldingKeepsAWriteToAliasedStorage) {
  ETW_REQUIRE_GPU();
  auto x = random_f32({4, 4}, 12), y = random_f32({4, 4}, 13);
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id w = gb.tensor(DType::Float32, {4, 4}, 0), m = gb.tensor(DType::Float32, {4, 4}, 0);
    gb.op("aten.exp.default", {g.input(x), w});
    gb.op("aten.permute_copy.default", {g.input(y), gb.int_list({1, 0}), m});
    gb.op("aten.permute_copy.default", {m, gb.int_list({1, 0}), g.output(DType::Float32, {4, 4})});
    gb.op("aten.neg.default", {w, g.output(DType::Float32, {4, 4})});
    gb.op("aten.abs.default", {w, g.output(DType::Float32, {4, 4})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  const double tol = half_precision() ? 1e-3 : 0.0;  // f16 storage rounds y
  for (int i = 0; i < 4; ++i)  // the aliased meaning: neg(w) = -y^T
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(plain.out[1].as<float>()[i * 4 + j], -y.as<float>()[j * 4 + i], tol);
  EXPECT_TRUE(AgreeToUlps(fused, plain));
}

// Found by seeds 1701 and 3753, the graphs that load unfused and not fused. linear [2, 2] ->
// unsqueeze [1, 2, 2] -> + c [1, 1, 1]. The epilogue pass takes a one-element operand across a
// view ("a scalar reads its one element", graph/epilogue_fusion.cpp), but the producer's epilogue
// builder then requires each operand to broadcast to the producer's own output [2, 2], which a
// rank-3 operand does not: "epilogue input [1, 1, 1] does not broadcast to the output [2, 2]".
TEST(RewriteDifferentialRepro, EpilogueAcrossAViewTakesAOneElementOperandOfAnyRank) {
  ETW_REQUIRE_GPU();
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    Id l = g.tensor(DType::Float32, {2, 2}), v = g.tensor(DType::Float32, {1, 2, 2});
    gb.op("aten.linear.default", {g.input(random_f32({2, 6}, 14)), g.constant(random_f32({2, 6}, 15)), gb.null(), l});
    gb.op("aten.unsqueeze_copy.default", {l, gb.int_(0), v});
    Id one = g.constant(random_f32({1, 1, 1}, 16));
    gb.op("aten.add.Tensor", {v, one, gb.int_(1), g.output(DType::Float32, {1, 2, 2})});
  };
  auto plain = load_graph(build, false);
  LoadedGraph fused;
  EXPECT_EQ(load_error([&] { fused = load_graph(build, true); }), "");
  if (!fused.out.empty()) {
    EXPECT_TRUE(AgreeToUlps(fused, plain));
  }
}

// Found by seeds 3396 and 4021 (where rewriting added dispatches). ones() read only
// by copy-free views that leave the graph: plain, one dispatch (the views alias its storage).
// Constant evaluation makes ones() a constant; a constant is not planned storage, so each view
// becomes a copy kernel: two dispatches. The results agree.
TEST(RewriteDifferentialRepro, ConstantEvaluationLeavesWhatViewsHandToTheOutputs) {
  ETW_REQUIRE_GPU();
  auto build = [&](OpGraph& g) {
    auto& gb = g.gb;
    g.input(random_f32({1}, 11));
    Id ones = g.tensor(DType::Float32, {3, 7});
    gb.op("aten.ones.default", {gb.int_list({3, 7}), gb.null(), gb.null(), gb.null(), gb.null(), ones});
    gb.op("aten.view_copy.default", {ones, gb.int_list({21}), g.output(DType::Float32, {21})});
    gb.op("aten.unsqueeze_copy.default", {ones, gb.int_(0), g.output(DType::Float32, {1, 3, 7})});
  };
  auto fused = load_graph(build, true), plain = load_graph(build, false);
  EXPECT_TRUE(AgreeToUlps(fused, plain));
  EXPECT_LE(fused.ops.size(), plain.ops.size()) << join(fused.ops) << " vs " << join(plain.ops);
}

}  // namespace
