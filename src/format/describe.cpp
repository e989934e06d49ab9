#include "format/describe.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "etwebgpu/error.h"
#include "format/escape.h"
#include "format/op_schema.h"

namespace etwebgpu::format {
namespace {

std::string num(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  std::string s = fmt::format("{}", d);  // shortest round-trip form
  return s;
}

template <class T>
std::string join(const std::vector<T>& v, const std::function<std::string(const T&)>& f) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + f(v[i]);
  return s;
}

std::string dims_str(const std::vector<int64_t>& d) {
  return "[" + join<int64_t>(d, [](const int64_t& x) { return std::to_string(x); }) + "]";
}

// Tensor shapes print compactly, like f32[2,3].
std::string shape_compact(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

std::string tensor_str(const VkTensorDesc& t) {
  return std::string(vk_dtype_name(t.dtype)) + shape_compact(t.dims) + (t.is_constant() ? "const" : "");
}

// "add+relu": an expression's term labels.
std::string expr_label(const VkValue& v) {
  std::string s;
  if (v.expr)
    for (const auto& t : v.expr->terms) s += (s.empty() ? "" : "+") + t.label;
  return s;
}

// Inline form of a non-tensor value; ValueList items are shown with their own forms.
std::string value_str(const VkGraphIR& g, int32_t id, int depth = 0) {
  const VkValue& v = g.values[static_cast<size_t>(id)];
  switch (v.kind) {
    case VkValueKind::Null: return "Null";
    case VkValueKind::Int: return fmt::format("Int({})", v.int_val);
    case VkValueKind::Double: return "Double(" + num(v.double_val) + ")";
    case VkValueKind::Bool: return v.bool_val ? "Bool(true)" : "Bool(false)";
    case VkValueKind::SymInt: return fmt::format("SymInt({})", v.int_val);
    case VkValueKind::String: return "String(\"" + escape_untrusted(v.str) + "\")";
    case VkValueKind::Expr: return "Expr(" + expr_label(v) + ")";
    case VkValueKind::Tensor: return fmt::format("%{}:{}", id, tensor_str(v.tensor));
    case VkValueKind::IntList:
      return "IntList" + dims_str(v.ints);
    case VkValueKind::DoubleList:
      return "DoubleList[" + join<double>(v.doubles, [](const double& d) { return num(d); }) + "]";
    case VkValueKind::BoolList:
      return "BoolList[" + join<uint8_t>(v.bools, [](const uint8_t& b) { return std::string(b ? "true" : "false"); }) + "]";
    case VkValueKind::ValueList:
      if (depth > 2) return "ValueList[...]";
      return "ValueList[" + join<int32_t>(v.ids, [&](const int32_t& i) {
               const VkValue& item = g.values[static_cast<size_t>(i)];
               return item.kind == VkValueKind::Tensor ? value_str(g, i, depth + 1)
                                                       : fmt::format("%{}={}", i, value_str(g, i, depth + 1));
             }) + "]";
  }
  return "?";
}

std::string short_scalar(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "u8";
    case ScalarType::Char: return "i8";
    case ScalarType::Short: return "i16";
    case ScalarType::Int: return "i32";
    case ScalarType::Long: return "i64";
    case ScalarType::Half: return "f16";
    case ScalarType::Float: return "f32";
    case ScalarType::Double: return "f64";
    case ScalarType::Bool: return "bool";
  }
  return scalar_type_name(t);
}

std::string evalue_str(const ExecutionPlan& p, int32_t id) {
  const EValue& v = p.values[static_cast<size_t>(id)];
  auto ids = [&](const std::vector<int64_t>& items) {
    return join<int64_t>(items, [](const int64_t& i) { return i < 0 ? std::string("None") : fmt::format("%{}", i); });
  };
  switch (v.kind) {
    case EValueKind::None: return fmt::format("%{}=None", id);
    case EValueKind::Null: return fmt::format("%{}=Null", id);
    case EValueKind::Int: return fmt::format("%{}=Int({})", id, v.int_val);
    case EValueKind::Bool: return fmt::format("%{}=Bool({})", id, v.bool_val ? "true" : "false");
    case EValueKind::Double: return fmt::format("%{}=Double({})", id, num(v.double_val));
    case EValueKind::String: return fmt::format("%{}=String(\"{}\")", id, escape_untrusted(v.str));
    case EValueKind::Tensor: {
      const TensorInfo& t = v.tensor;
      std::string s = fmt::format("%{}:{}{}", id, short_scalar(t.scalar_type), shape_compact(t.sizes));
      if (t.dynamism == ShapeDynamism::DynamicBound) s += "(bound)";
      if (t.dynamism == ShapeDynamism::DynamicUnbound) s += "(unbound)";
      if (t.is_constant()) s += "const";
      return s;
    }
    case EValueKind::IntList: {
      std::string s = fmt::format("%{}=IntList[", id);
      for (size_t i = 0; i < v.items.size(); ++i) {
        const EValue& it = p.values[static_cast<size_t>(v.items[i])];
        s += (i ? ", " : "") + std::to_string(it.int_val);
      }
      return s + "]";
    }
    case EValueKind::DoubleList:
      return fmt::format("%{}=DoubleList[{}]", id, join<double>(v.doubles, [](const double& d) { return num(d); }));
    case EValueKind::BoolList:
      return fmt::format("%{}=BoolList[{}]", id,
                         join<uint8_t>(v.bools, [](const uint8_t& b) { return std::string(b ? "true" : "false"); }));
    case EValueKind::TensorList: return fmt::format("%{}=TensorList[{}]", id, ids(v.items));
    case EValueKind::OptionalTensorList: return fmt::format("%{}=OptionalTensorList[{}]", id, ids(v.items));
  }
  return "?";
}

std::string indent(const std::string& s, const std::string& pad) {
  std::string out;
  size_t start = 0;
  while (start < s.size()) {
    const size_t nl = s.find('\n', start);
    const size_t end = nl == std::string::npos ? s.size() : nl + 1;
    out += pad + s.substr(start, end - start);
    start = end;
  }
  return out;
}

}  // namespace

std::string describe_vkgraph(const VkGraphIR& g) {
  std::string s;
  size_t const_bytes = 0;
  for (const auto& c : g.constants) const_bytes += c.data.size();
  auto idlist = [](const std::vector<uint32_t>& v) {
    return "[" + join<uint32_t>(v, [](const uint32_t& i) { return fmt::format("%{}", i); }) + "]";
  };
  s += fmt::format("VkGraph version \"{}\": {} values, {} ops, inputs {}, outputs {}, {} constants ({} bytes)\n",
                   escape_untrusted(g.version), g.values.size(), g.chain.size(), idlist(g.input_ids), idlist(g.output_ids),
                   g.constants.size(), const_bytes);
  s += "values:\n";
  for (size_t i = 0; i < g.values.size(); ++i) {
    const VkValue& v = g.values[i];
    if (v.kind == VkValueKind::Tensor) {
      const VkTensorDesc& t = v.tensor;
      std::string extra;
      if (t.is_constant()) {
        const VkConstant& c = g.constants[static_cast<size_t>(t.constant_id)];
        extra = fmt::format(" constant {} ({} bytes, {})", t.constant_id, c.data.size(),
                            c.named_key.empty() ? std::string("inline") : "named " + escape_untrusted(c.named_key));
      } else {
        extra = t.mem_obj_id >= 0 ? fmt::format(" mem_obj {}", t.mem_obj_id) : std::string(" dedicated");
      }
      s += fmt::format("  %{} Tensor {}{}{}\n", i, vk_dtype_name(t.dtype), shape_compact(t.dims), extra);
    } else {
      s += fmt::format("  %{} {}\n", i, value_str(g, static_cast<int32_t>(i)));
    }
  }
  s += "ops:\n";
  for (const VkOpCall& op : g.chain) {
    std::string lhs = "()";
    std::vector<int32_t> args = op.args;
    if (!args.empty()) {
      const int32_t out = args.back();
      args.pop_back();
      const VkValue& ov = g.values[static_cast<size_t>(out)];
      if (ov.kind == VkValueKind::Tensor) lhs = fmt::format("%{}:{}", out, tensor_str(ov.tensor));
      else if (ov.kind == VkValueKind::ValueList) lhs = fmt::format("%{}={}", out, value_str(g, out));
      else lhs = fmt::format("%{}:{}", out, vk_value_kind_name(ov.kind));
    }
    // Scalar arguments print by name (`alpha=Int(1)`) when the operator's signature is known.
    const OpSchema* schema = find_op_schema(op.name);
    const bool named = schema && schema->args.size() == args.size();
    std::string a;
    for (size_t k = 0; k < args.size(); ++k) {
      const VkValue& av = g.values[static_cast<size_t>(args[k])];
      std::string one = value_str(g, args[k]);
      if (av.kind != VkValueKind::Tensor) {
        one = named ? fmt::format("{}={}", schema->args[k], one) : fmt::format("%{}={}", args[k], one);
      }
      a += (k ? ", " : "") + one;
    }
    s += fmt::format("  [{}] {} = {}({})\n", op.node_id, lhs, escape_untrusted(op.name), a);
  }
  s += fmt::format("total constant bytes: {}\n", const_bytes);
  return s;
}

std::string describe_program(const Program& prog, bool include_graphs) {
  std::string s;
  size_t nd_bytes = 0;
  for (const auto& [k, v] : prog.named_data) nd_bytes += v.size();
  s += fmt::format("Program version {}: {} plan(s), {} named-data entries ({} bytes), file {} bytes\n", prog.version,
                   prog.plans.size(), prog.named_data.size(), nd_bytes, prog.bytes ? prog.bytes->size() : 0);
  for (const ExecutionPlan& p : prog.plans) {
    s += fmt::format("plan '{}': {} values, {} inputs, {} outputs, {} chain(s), {} operators, {} delegates, "
                     "arenas {}\n",
                     escape_untrusted(p.name), p.values.size(), p.inputs.size(), p.outputs.size(), p.chains.size(), p.operators.size(),
                     p.delegates.size(), dims_str(p.non_const_buffer_sizes));
    auto io = [&](const char* title, const std::vector<int32_t>& ids) {
      s += fmt::format("  {}:\n", title);
      for (int32_t id : ids) {
        const EValue& v = p.values[static_cast<size_t>(id)];
        std::string dyn;
        if (v.kind == EValueKind::Tensor)
          dyn = v.tensor.dynamism == ShapeDynamism::Static ? " static"
                : v.tensor.dynamism == ShapeDynamism::DynamicBound ? " dynamic (sizes are upper bounds)"
                                                                  : " dynamic unbound";
        s += fmt::format("    {}{}\n", evalue_str(p, id), dyn);
      }
    };
    io("inputs", p.inputs);
    io("outputs", p.outputs);
    if (!p.operators.empty()) {
      s += "  operators:\n";
      for (size_t i = 0; i < p.operators.size(); ++i) s += fmt::format("    [{}] {}\n", i, escape_untrusted(p.operators[i].key()));
    }
    for (size_t ci = 0; ci < p.chains.size(); ++ci) {
      s += fmt::format("  chain {}: {} instructions\n", ci, p.chains[ci].size());
      for (size_t ii = 0; ii < p.chains[ci].size(); ++ii) {
        const Instruction& in = p.chains[ci][ii];
        auto args = [&](const std::vector<int32_t>& a) {
          return join<int32_t>(a, [&](const int32_t& id) { return evalue_str(p, id); });
        };
        switch (in.kind) {
          case InstrKind::KernelCall:
            s += fmt::format("    [{}] KernelCall {}({})\n", ii,
                             escape_untrusted(p.operators[static_cast<size_t>(in.index)].key()),
                             args(in.args));
            break;
          case InstrKind::DelegateCall:
            s += fmt::format("    [{}] DelegateCall delegate {} ({})({})\n", ii, in.index,
                             escape_untrusted(p.delegates[static_cast<size_t>(in.index)].id), args(in.args));
            break;
          case InstrKind::MoveCall:
            s += fmt::format("    [{}] MoveCall %{} -> %{}\n", ii, in.move_from, in.move_to);
            break;
          case InstrKind::JumpFalseCall:
            s += fmt::format("    [{}] JumpFalseCall if not %{} goto {}\n", ii, in.cond_value, in.destination);
            break;
          case InstrKind::FreeCall: s += fmt::format("    [{}] FreeCall %{}\n", ii, in.free_value); break;
        }
      }
    }
    for (size_t di = 0; di < p.delegates.size(); ++di) {
      const Delegate& d = p.delegates[di];
      s += fmt::format("  delegate {}: {} ({} byte blob", di, escape_untrusted(d.id), d.blob.size());
      for (const auto& [k, v] : d.compile_specs) s += fmt::format(", spec {}={} bytes", escape_untrusted(k), v.size());
      s += ")\n";
      if (d.id != "VulkanBackend") continue;
      try {
        const VkGraphIR g = read_vkgraph(d.blob, prog);
        if (include_graphs) {
          s += indent(describe_vkgraph(g), "    ");
        } else {
          size_t cb = 0;
          for (const auto& c : g.constants) cb += c.data.size();
          s += fmt::format("    {} values, {} ops, {} inputs, {} outputs, {} constant bytes\n", g.values.size(),
                           g.chain.size(), g.input_ids.size(), g.output_ids.size(), cb);
        }
      } catch (const Error& e) {
        s += fmt::format("    cannot decode: {}\n", e.what());
      }
    }
  }
  return s;
}

std::string vkgraph_to_json(const VkGraphIR& g) {
  using nlohmann::json;
  auto dbl = [](double d) -> json {
    if (std::isfinite(d)) return d;
    return num(d);
  };
  json j;
  j["version"] = g.version;
  json values = json::array();
  for (const VkValue& v : g.values) {
    json e;
    e["kind"] = vk_value_kind_name(v.kind);
    switch (v.kind) {
      case VkValueKind::Null: break;
      case VkValueKind::Int: case VkValueKind::SymInt: e["value"] = v.int_val; break;
      case VkValueKind::Double: e["value"] = dbl(v.double_val); break;
      case VkValueKind::Bool: e["value"] = v.bool_val; break;
      case VkValueKind::String: e["value"] = v.str; break;
      case VkValueKind::Expr: e["value"] = expr_label(v); break;
      case VkValueKind::IntList: e["items"] = v.ints; break;
      case VkValueKind::DoubleList: {
        json items = json::array();
        for (double d : v.doubles) items.push_back(dbl(d));
        e["items"] = items;
        break;
      }
      case VkValueKind::BoolList: {
        json items = json::array();
        for (uint8_t b : v.bools) items.push_back(b != 0);
        e["items"] = items;
        break;
      }
      case VkValueKind::ValueList: e["items"] = v.ids; break;
      case VkValueKind::Tensor:
        e["dtype"] = vk_dtype_name(v.tensor.dtype);
        e["dims"] = v.tensor.dims;
        e["constant_id"] = v.tensor.constant_id;
        e["mem_obj_id"] = v.tensor.mem_obj_id;
        break;
    }
    values.push_back(std::move(e));
  }
  j["values"] = std::move(values);
  json chain = json::array();
  for (const VkOpCall& op : g.chain) chain.push_back({{"node_id", op.node_id}, {"name", op.name}, {"args", op.args}});
  j["chain"] = std::move(chain);
  j["input_ids"] = g.input_ids;
  j["output_ids"] = g.output_ids;
  json consts = json::array();
  for (const VkConstant& c : g.constants) consts.push_back({{"named_key", c.named_key}, {"size", c.data.size()}});
  j["constants"] = std::move(consts);
  // Names and strings from the file may be invalid UTF-8: replaced by U+FFFD instead of throwing.
  return j.dump(1, ' ', false, json::error_handler_t::replace);
}

}  // namespace etwebgpu::format
