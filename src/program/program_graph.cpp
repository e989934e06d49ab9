#include "program/program_graph.h"

#include <algorithm>
#include <map>
#include <set>

#include "format/escape.h"
#include "format/op_schema.h"
#include "graph/op_registry.h"

namespace etwebgpu::graph {

using format::EValueKind;
using format::InstrKind;
using format::VkValue;
using format::VkValueKind;

namespace {

format::VkDType vk_dtype_of(format::ScalarType t) {
  switch (t) {
    case format::ScalarType::Float: return format::VkDType::Float32;
    case format::ScalarType::Double: return format::VkDType::Float64;
    case format::ScalarType::Half: return format::VkDType::Float16;
    case format::ScalarType::Int: return format::VkDType::Int32;
    case format::ScalarType::Long: return format::VkDType::Int64;
    case format::ScalarType::Bool: return format::VkDType::Bool;
    case format::ScalarType::Byte: return format::VkDType::UInt8;
    case format::ScalarType::Char: return format::VkDType::Int8;
    default: throw Error(ErrorKind::Unsupported, std::string("tensor scalar type ") + format::scalar_type_name(t));
  }
}

int32_t add_value(format::VkGraphIR& ir, VkValue v) {
  ir.values.push_back(std::move(v));
  return static_cast<int32_t>(ir.values.size() - 1);
}
int32_t add_null(format::VkGraphIR& ir) { return add_value(ir, VkValue{}); }

// Program EValue -> VkValue (lists resolved to raw values; constants registered).
VkValue convert_evalue(const format::ExecutionPlan& plan, const format::EValue& e, format::VkGraphIR& ir) {
  VkValue v;
  auto int_item = [&](int64_t id) -> int64_t {
    if (id < 0 || static_cast<size_t>(id) >= plan.values.size() || plan.values[id].kind != EValueKind::Int)
      throw Error(ErrorKind::Format, "IntList item " + std::to_string(id) + " is not an Int EValue");
    return plan.values[id].int_val;
  };
  switch (e.kind) {
    case EValueKind::None: case EValueKind::Null: v.kind = VkValueKind::Null; break;
    case EValueKind::Int: v.kind = VkValueKind::Int; v.int_val = e.int_val; break;
    case EValueKind::Bool: v.kind = VkValueKind::Bool; v.bool_val = e.bool_val; break;
    case EValueKind::Double: v.kind = VkValueKind::Double; v.double_val = e.double_val; break;
    case EValueKind::String: v.kind = VkValueKind::String; v.str = e.str; break;
    case EValueKind::IntList:
      v.kind = VkValueKind::IntList;
      for (auto id : e.items) v.ints.push_back(int_item(id));
      break;
    case EValueKind::DoubleList: v.kind = VkValueKind::DoubleList; v.doubles = e.doubles; break;
    case EValueKind::BoolList: v.kind = VkValueKind::BoolList; v.bools = e.bools; break;
    case EValueKind::TensorList: case EValueKind::OptionalTensorList:
      // Items are EValue ids (same ids in the merged graph); -1 (None) gets a Null filled in later.
      v.kind = VkValueKind::ValueList;
      for (auto id : e.items) v.ids.push_back(static_cast<int32_t>(id));
      break;
    case EValueKind::Tensor: {
      v.kind = VkValueKind::Tensor;
      v.tensor.dtype = vk_dtype_of(e.tensor.scalar_type);
      v.tensor.dims = e.tensor.sizes;
      v.tensor.mem_obj_id = -1;  // the file's arena offsets are not used: graph/memory_plan.h plans the merged graph
      v.tensor.constant_id = -1;
      for (size_t i = 0; i < e.tensor.dim_order.size(); ++i)
        if (e.tensor.dim_order[i] != i)
          throw Error(ErrorKind::Unsupported, "a tensor with non-contiguous dim_order (only contiguous is supported)");
      if (e.tensor.is_constant()) {
        v.tensor.constant_id = static_cast<int32_t>(ir.constants.size());
        ir.constants.push_back(format::VkConstant{e.tensor.constant_data, {}});
      }
      break;
    }
  }
  return v;
}

// A KV-cache update `u = index_put(S, idx, v); ...; copy_(S, u)` on a mutable buffer S writes
// in place when nothing reads S between the two: u and S then share one buffer, the index_put
// skips copying S and the copy_ moves nothing.
void alias_state_updates(format::VkGraphIR& ir, int32_t& next_mem) {
  auto& chain = ir.chain;
  // Argument `x` is `v` or a list holding it (cat's tensors, a multi-output op's outputs).
  auto names = [&ir](int32_t x, int32_t v) {
    if (x == v) return true;
    if (x < 0 || static_cast<size_t>(x) >= ir.values.size()) return false;
    for (int32_t id : ir.values[x].ids)
      if (id == v) return true;
    return false;
  };
  auto reads = [&names](const format::VkOpCall& c, int32_t v) {
    for (size_t a = 0; a + 1 < c.args.size(); ++a)
      if (names(c.args[a], v)) return true;
    return false;
  };
  for (const auto& st : ir.state) {
    int32_t s = st.value_id;
    for (size_t i = 0; i < chain.size(); ++i) {
      const auto& put = chain[i];
      if (put.name != "aten.index_put.default" || put.args.size() != 5 || put.args[0] != s || put.args[4] == s) continue;
      int32_t u = put.args[4];
      size_t j = i + 1;
      bool clean = true;
      for (; j < chain.size(); ++j) {
        const auto& c = chain[j];
        if (c.name == "aten.copy_.default" && c.args.size() == 4 && c.args[0] == s && c.args[1] == u) break;
        if (reads(c, s) || names(c.args.back(), s) || names(c.args.back(), u)) clean = false;
      }
      if (j == chain.size() || !clean) continue;
      auto& ts = ir.values[s].tensor;
      auto& tu = ir.values[u].tensor;
      if (ts.dims != tu.dims || ts.dtype != tu.dtype || tu.mem_obj_id >= 0 || ts.mem_obj_id >= 0) continue;
      ts.mem_obj_id = tu.mem_obj_id = next_mem++;
      break;
    }
  }
}

// ExecuTorch's emitter (exir/emit/_emitter.py, _emit_operator) ends a KernelCall with one return
// entry after the out arguments: the out tensor itself for one output (a separate EValue for
// in-place kernels), a fresh TensorList of the outs for several. Returns the arguments without it;
// a call laid out otherwise is refused, saying what is wrong.
std::vector<int32_t> without_return_entry(const std::string& key, size_t nout, const format::ExecutionPlan& plan,
                                          const std::vector<int32_t>& args) {
  if (args.size() < nout + 1)
    throw Error(ErrorKind::Format, key + ": KernelCall passes " + std::to_string(args.size()) + " arguments; it needs " +
                                       std::to_string(nout) + " out tensor(s) and a return entry at least");
  std::vector<int32_t> a(args.begin(), args.end() - 1);
  if (nout == 1) return a;
  const format::EValue& ret = plan.values[args.back()];
  const std::vector<int32_t> outs(a.end() - static_cast<std::ptrdiff_t>(nout), a.end());
  std::vector<int32_t> items;
  if (ret.kind == EValueKind::TensorList)
    for (int64_t id : ret.items) items.push_back(static_cast<int32_t>(id));
  if (items != outs)
    throw Error(ErrorKind::Format, key + ": its " + std::to_string(nout) + " out tensors (%" +
                                       std::to_string(outs.front()) + "..%" + std::to_string(outs.back()) +
                                       ") must be followed by one TensorList return entry holding them; the last "
                                       "argument %" + std::to_string(args.back()) + " is not that list");
  return a;
}

}  // namespace

int kernel_call_outputs(const std::string& key) {
  const format::OutVariant* v = format::find_out_variant(key).variant;
  return v ? v->outputs : 1;
}

bool map_kernel_call(const std::string& key, std::vector<int32_t>& args, std::string& op_name,
                     format::VkGraphIR& ir) {
  // Out variants whose arguments differ from the operator's: laid out by format/op_schema.
  if (auto [schema, v] = format::find_out_variant(key); v) {
    // Multi-output kernels end with their out tensors, which a VkGraph passes as one ValueList.
    size_t need = v->outputs > 1 ? v->layout.size() + static_cast<size_t>(v->outputs)
                                 : static_cast<size_t>(*std::max_element(v->layout.begin(), v->layout.end())) + 1;
    if (args.size() < need)
      throw Error(ErrorKind::Format, key + ": KernelCall passes " + std::to_string(args.size()) +
                                         " arguments before its return entry; its schema has " + std::to_string(need));
    std::vector<int32_t> a;
    for (int src : v->layout) a.push_back(src < 0 ? add_null(ir) : args[src]);
    if (v->outputs > 1) {
      VkValue outs;
      outs.kind = VkValueKind::ValueList;
      outs.ids.assign(args.end() - v->outputs, args.end());
      a.push_back(add_value(ir, std::move(outs)));
    }
    args = std::move(a);
    op_name = schema->name;
    return true;
  }
  // Generic rule: "ns::name.X_out" -> "ns.name.X", "ns::name.out" -> "ns.name.default"; the
  // out-variant's arguments are the functional ones followed by out, which is the VkGraph layout.
  auto colon = key.find("::");
  auto dot = key.find('.', colon == std::string::npos ? 0 : colon + 2);
  if (colon == std::string::npos || dot == std::string::npos) return false;
  std::string ns = key.substr(0, colon), name = key.substr(colon + 2, dot - colon - 2), ov = key.substr(dot + 1);
  if (ov == "out") ov = "default";
  else if (ov.size() > 4 && ov.compare(ov.size() - 4, 4, "_out") == 0) ov = ov.substr(0, ov.size() - 4);
  else return false;
  op_name = ns + "." + name + "." + ov;
  return true;
}

std::vector<std::string> kernel_call_names(const std::string& op_name) {
  std::vector<std::string> names;
  bool renamed = false;  // an out variant under another name replaces the generic spelling
  if (const format::OpSchema* s = format::find_op_schema(op_name))
    for (const format::OutVariant& v : s->out_variants) {
      names.push_back(v.kernel);
      renamed = renamed || !v.in_place;  // in-place kernels (copy_, index_put_) come in addition
    }
  if (renamed) return names;
  auto d1 = op_name.find('.');
  auto d2 = d1 == std::string::npos ? std::string::npos : op_name.find('.', d1 + 1);
  if (d2 == std::string::npos || op_name.compare(0, d1, "et_vk") == 0) return names;
  if (op_name[d2 - 1] == '_') return names;  // in-place ops (copy_) have no out variant
  std::string ov = op_name.substr(d2 + 1);
  std::string generic = op_name.substr(0, d1) + "::" + op_name.substr(d1 + 1, d2 - d1 - 1) + "." +
                        (ov == "default" ? "out" : ov + "_out");
  // A listed out variant may claim the generic spelling for another op (aten::all.out -> all.dim).
  if (!format::find_out_variant(generic).variant) names.push_back(generic);
  return names;
}

MergedProgram merge_program(const format::Program& program, const format::ExecutionPlan& plan) {
  MergedProgram mp;
  auto& ir = mp.ir;
  ir.version = "merged";
  std::set<std::string> unsupported;
  size_t nvals = plan.values.size();
  for (const auto& e : plan.values) ir.values.push_back(convert_evalue(plan, e, ir));
  // None entries of optional tensor lists become Null values.
  for (size_t i = 0; i < nvals; ++i)
    for (auto& id : ir.values[i].ids)
      if (id < 0) id = add_null(ir);
      else if (static_cast<size_t>(id) >= nvals) throw Error(ErrorKind::Format, "tensor list item out of range");
  for (int32_t id : plan.inputs) {
    if (id < 0 || static_cast<size_t>(id) >= nvals) throw Error(ErrorKind::Format, "plan input id out of range");
    ir.input_ids.push_back(static_cast<uint32_t>(id));
  }
  for (int32_t id : plan.outputs) {
    if (id < 0 || static_cast<size_t>(id) >= nvals) throw Error(ErrorKind::Format, "plan output id out of range");
    ir.output_ids.push_back(static_cast<uint32_t>(id));
  }
  int32_t next_mem = 0;               // next free memory-object id in the merged graph
  std::map<int32_t, int32_t> moved;  // MoveCall: later uses of `to` read `from`
  auto resolve = [&](int32_t id) {
    auto it = moved.find(id);
    return it == moved.end() ? id : it->second;
  };
  const auto& reg = OpRegistry::global();
  std::set<int32_t> copy_targets;  // program values written back by copy_: mutable buffers
  uint32_t node = 0;
  for (const auto& chain : plan.chains) {
    for (const auto& ins : chain) {
      for (int32_t a : ins.args)
        if (a < 0 || static_cast<size_t>(a) >= nvals)
          throw Error(ErrorKind::Format, "instruction argument EValue " + std::to_string(a) + " out of range");
      if (ins.kind == InstrKind::DelegateCall) {
        if (ins.index < 0 || static_cast<size_t>(ins.index) >= plan.delegates.size())
          throw Error(ErrorKind::Format, "DelegateCall names delegate " + std::to_string(ins.index) + " of " +
                                             std::to_string(plan.delegates.size()));
        const auto& d = plan.delegates[ins.index];
        if (d.id != "VulkanBackend") {
          unsupported.insert("delegate backend " + format::escape_untrusted(d.id));
          mp.instructions.push_back({"delegate", format::escape_untrusted(d.id) + " #" + std::to_string(ins.index), false});
          continue;
        }
        auto sub = format::read_vkgraph(d.blob, program);
        if (ins.args.size() != sub.input_ids.size() + sub.output_ids.size())
          throw Error(ErrorKind::Format, "DelegateCall " + std::to_string(ins.index) + " passes " +
                                             std::to_string(ins.args.size()) + " values; its graph has " +
                                             std::to_string(sub.input_ids.size()) + " inputs and " +
                                             std::to_string(sub.output_ids.size()) + " outputs");
        // Delegate value id -> merged id: its inputs/outputs are the program's EValues.
        std::vector<int32_t> map(sub.values.size(), -1);
        std::set<uint32_t> io;
        for (size_t k = 0; k < sub.input_ids.size(); ++k) {
          map[sub.input_ids[k]] = resolve(ins.args[k]);
          io.insert(sub.input_ids[k]);
        }
        for (size_t k = 0; k < sub.output_ids.size(); ++k) {
          if (io.count(sub.output_ids[k]))
            throw Error(ErrorKind::Unsupported, "a delegate output that is also one of its inputs");
          map[sub.output_ids[k]] = ins.args[sub.input_ids.size() + k];
          moved.erase(ins.args[sub.input_ids.size() + k]);
          // The delegate computes its own output shape: one the program holds differently would
          // come back with the delegate's shape under the program's name.
          const auto& pv = ir.values[map[sub.output_ids[k]]];
          const auto& dv = sub.values[sub.output_ids[k]];
          if (pv.kind == VkValueKind::Tensor && dv.kind == VkValueKind::Tensor &&
              numel(pv.tensor.dims) != numel(dv.tensor.dims))
            throw Error(ErrorKind::Format, "delegate output %" + std::to_string(sub.output_ids[k]) + " " +
                                               shape_str(dv.tensor.dims) + " does not match program EValue " +
                                               std::to_string(map[sub.output_ids[k]]) + " " + shape_str(pv.tensor.dims));
        }
        for (uint32_t k : io) {
          const auto& pv = ir.values[map[k]];
          if (pv.kind != VkValueKind::Tensor)
            throw Error(ErrorKind::Format, "delegate input EValue " + std::to_string(map[k]) + " is not a tensor");
          if (numel(pv.tensor.dims) != numel(sub.values[k].tensor.dims))
            throw Error(ErrorKind::Format, "delegate input %" + std::to_string(k) + " " +
                                               shape_str(sub.values[k].tensor.dims) + " does not match program EValue " +
                                               shape_str(pv.tensor.dims));
        }
        int32_t const_base = static_cast<int32_t>(ir.constants.size());
        for (auto& c : sub.constants) ir.constants.push_back(c);
        for (size_t v = 0; v < sub.values.size(); ++v) {
          if (map[v] >= 0) continue;
          VkValue val = sub.values[v];
          if (val.kind == VkValueKind::Tensor && val.tensor.constant_id >= 0) val.tensor.constant_id += const_base;
          map[v] = add_value(ir, std::move(val));
        }
        // Memory objects are per delegate: renumber them densely after every id already used, so
        // two delegates never share by accident (and hostile ids cannot overflow or blow up tables).
        std::map<int32_t, int32_t> mem_map;
        for (size_t v = 0; v < sub.values.size(); ++v) {
          auto& mv = ir.values[map[v]];
          if (static_cast<size_t>(map[v]) >= nvals) {
            for (auto& id : mv.ids) id = map[id];
            if (mv.kind == VkValueKind::Tensor && mv.tensor.mem_obj_id >= 0) {
              auto [it, fresh] = mem_map.emplace(mv.tensor.mem_obj_id, next_mem);
              if (fresh) ++next_mem;
              mv.tensor.mem_obj_id = it->second;
            }
          }
        }
        std::set<std::string> missing;
        for (auto& c : sub.chain) {
          format::VkOpCall oc{node++, c.name, {}};
          for (int32_t a : c.args) oc.args.push_back(map[a]);
          if (!reg.has(c.name)) missing.insert(format::escape_untrusted(c.name));
          ir.chain.push_back(std::move(oc));
        }
        for (auto& m : missing) unsupported.insert(m);
        mp.instructions.push_back({"delegate", "VulkanBackend #" + std::to_string(ins.index) + " (" +
                                                   std::to_string(sub.chain.size()) + " ops)",
                                   missing.empty()});
      } else if (ins.kind == InstrKind::KernelCall) {
        if (ins.index < 0 || static_cast<size_t>(ins.index) >= plan.operators.size())
          throw Error(ErrorKind::Format, "KernelCall names operator " + std::to_string(ins.index));
        std::string key = plan.operators[ins.index].key();
        const size_t nout = static_cast<size_t>(kernel_call_outputs(key));
        std::vector<int32_t> args = without_return_entry(format::escape_untrusted(key), nout, plan, ins.args);
        const std::vector<int32_t> outs(args.end() - static_cast<std::ptrdiff_t>(nout), args.end());
        for (auto& a : args) {
          a = resolve(a);
          // A tensor list naming a moved value (an in-place kernel's return entry, a MoveCall
          // target) reads what it now resolves to, through a fresh list for this call.
          if (a >= 0 && static_cast<size_t>(a) < nvals && !ir.values[a].ids.empty()) {
            VkValue l = ir.values[a];
            bool changed = false;
            for (auto& id : l.ids) {
              int32_t r = resolve(id);
              changed = changed || r != id;
              id = r;
            }
            if (changed) a = add_value(ir, std::move(l));
          }
        }
        std::string op;
        bool ok = map_kernel_call(key, args, op, ir) && reg.has(op);
        if (!ok) {
          unsupported.insert(format::escape_untrusted(key));
          mp.instructions.push_back({"unsupported", format::escape_untrusted(key), false});
          continue;
        }
        if (args.back() == args.front() && key.back() == '_') {
          // In-place: the return entry is self; later uses of it read self.
          moved[ins.args.back()] = args.front();
          if (key == "aten::copy_") copy_targets.insert(args.front());
        } else {
          for (int32_t o : outs) moved.erase(o);
        }
        ir.chain.push_back(format::VkOpCall{node++, op, args});
        mp.instructions.push_back({"gpu-kernel", format::escape_untrusted(key) + " -> " + op, true});
      } else if (ins.kind == InstrKind::MoveCall) {
        if (ins.move_from < 0 || ins.move_to < 0 || static_cast<size_t>(ins.move_from) >= nvals ||
            static_cast<size_t>(ins.move_to) >= nvals)
          throw Error(ErrorKind::Format, "MoveCall ids out of range");
        moved[ins.move_to] = resolve(ins.move_from);
        mp.instructions.push_back({"move", "%" + std::to_string(ins.move_from) + " -> %" + std::to_string(ins.move_to), true});
      } else if (ins.kind == InstrKind::FreeCall) {
        mp.instructions.push_back({"free", "%" + std::to_string(ins.free_value) + " (no-op: buffers live with the model)", true});
      } else {
        unsupported.insert("JumpFalseCall (control flow)");
        mp.instructions.push_back({"unsupported", "JumpFalseCall", false});
      }
    }
  }
  for (auto& o : ir.output_ids) {
    o = static_cast<uint32_t>(resolve(static_cast<int32_t>(o)));
    if (ir.values[o].kind != VkValueKind::Tensor)
      throw Error(ErrorKind::Unsupported, "method output %" + std::to_string(o) + " is not a tensor");
  }
  // Mutable buffers: tensors with initial data in the file's mutable segment, and every copy_
  // target (a buffer the program writes back).
  for (size_t i = 0; i < nvals; ++i) {
    const auto& e = plan.values[i];
    bool has_init = e.kind == EValueKind::Tensor && e.tensor.has_allocation && e.tensor.data_buffer_idx > 0;
    if (has_init || copy_targets.count(static_cast<int32_t>(i)))
      ir.state.push_back({static_cast<int32_t>(i), has_init ? e.tensor.constant_data : format::ByteSpan{}});
  }
  for (const auto& st : ir.state)
    for (uint32_t in : ir.input_ids)
      if (static_cast<int32_t>(in) == st.value_id)
        throw Error(ErrorKind::Unsupported, "mutable buffer %" + std::to_string(st.value_id) + " is also a method input");
  alias_state_updates(ir, next_mem);
  mp.unsupported.assign(unsupported.begin(), unsupported.end());
  return mp;
}

}  // namespace etwebgpu::graph
