// etwebgpu._etwebgpu: the C++ runtime for Python (pybind11). The Python package (etwebgpu/)
// wraps it; this file only converts between NumPy arrays and HostTensors, maps etwebgpu::Error to
// Python exceptions, and releases the GIL around everything that waits on the GPU.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "etwebgpu/device.h"
#include "etwebgpu/etwebgpu.h"
#include "etwebgpu/generate.h"

namespace py = pybind11;
using namespace etwebgpu;

namespace {

// NumPy dtype <-> DType, by the NumPy name (float32, int64, bool, ...): the names dtype_name()
// prints are the same ones except for Bool.
struct DTypeName { DType dtype; const char* numpy; };
constexpr DTypeName kDTypes[] = {
    {DType::Float32, "float32"}, {DType::Int32, "int32"}, {DType::Int64, "int64"},   {DType::Bool, "bool"},
    {DType::UInt8, "uint8"},     {DType::Int8, "int8"},   {DType::Float16, "float16"}, {DType::Float64, "float64"},
};

const char* numpy_name(DType t) {
  for (auto& d : kDTypes)
    if (d.dtype == t) return d.numpy;
  throw Error(ErrorKind::Internal, "no NumPy dtype for " + std::string(dtype_name(t)));
}

HostTensor to_host(const py::array& a, size_t index) {
  std::string name = py::str(a.dtype().attr("name"));
  const DTypeName* match = nullptr;
  for (auto& d : kDTypes)
    if (name == d.numpy) match = &d;
  if (!match)
    throw Error(ErrorKind::InvalidArgument, "input " + std::to_string(index) + " has NumPy dtype " + name +
                                                ", which etwebgpu cannot pass to a model");
  if (!(a.flags() & py::array::c_style) || !a.dtype().attr("isnative").cast<bool>())
    throw Error(ErrorKind::InvalidArgument, "input " + std::to_string(index) +
                                                " is not a C-contiguous native-endian array");
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  HostTensor t(match->dtype, shape);
  if (a.nbytes() != static_cast<py::ssize_t>(t.data.size()))
    throw Error(ErrorKind::Internal, "input " + std::to_string(index) + ": byte size mismatch");
  if (!t.data.empty()) std::memcpy(t.data.data(), a.data(), t.data.size());
  return t;
}

py::array to_numpy(HostTensor&& t) {
  // The array owns the HostTensor's bytes (no copy): a capsule deletes it with the array.
  auto* held = new HostTensor(std::move(t));
  py::capsule owner(held, [](void* p) { delete static_cast<HostTensor*>(p); });
  std::vector<py::ssize_t> shape(held->shape.begin(), held->shape.end());
  return py::array(py::dtype(numpy_name(held->dtype)), shape, {}, held->data.data(), owner);
}

py::dict io_dict(const IoInfo& io) {
  py::dict d;
  d["dtype"] = numpy_name(io.dtype);
  d["shape"] = py::tuple(py::cast(io.sizes));
  d["dynamic"] = io.dynamic;
  return d;
}

// One loaded model. Python threads sharing it are serialised here (the C++ Model refuses
// overlapping runs instead of waiting); separate models run concurrently.
struct PyModel {
  std::unique_ptr<Model> model;
  std::mutex mu;
  Profile last_profile;
  bool profiled = false;

  void check_open() const {
    if (!model) throw Error(ErrorKind::InvalidArgument, "the model was closed");
  }

  std::vector<py::array> run(const std::vector<py::array>& arrays, bool profile) {
    check_open();
    std::vector<HostTensor> inputs;
    inputs.reserve(arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) inputs.push_back(to_host(arrays[i], i));
    std::vector<HostTensor> outputs;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu);
      Profile p;
      outputs = model->run(inputs, profile ? &p : nullptr);
      if (profile) {
        last_profile = std::move(p);
        profiled = true;
      }
    }
    std::vector<py::array> result;
    for (auto& t : outputs) result.push_back(to_numpy(std::move(t)));
    return result;
  }

  py::dict profile() {
    check_open();
    std::lock_guard<std::mutex> lock(mu);
    if (!profiled) throw Error(ErrorKind::InvalidArgument, "no profiled run yet: call run(inputs, profile=True) first");
    py::list dispatches;
    for (auto& d : last_profile.dispatches) {
      py::dict x;
      x["op"] = d.op;
      x["variant"] = d.variant;
      x["gpu_ns"] = d.gpu_ns;
      dispatches.append(x);
    }
    py::dict r;
    r["has_gpu_times"] = last_profile.has_gpu_times;
    r["dispatches"] = dispatches;
    return r;
  }

  void reset_state() {
    check_open();
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(mu);
    model->reset_state();
  }

  // The generation loop of `etwebgpu generate`; on_token runs with the GIL held and may return
  // False to stop.
  py::dict generate(const std::vector<int64_t>& prompt, const GenerateOptions& opts,
                    const std::function<bool(int64_t)>& on_token) {
    check_open();
    GenerateResult r;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu);
      r = etwebgpu::generate(*model, prompt, opts, [&](int64_t token) {
        py::gil_scoped_acquire gil;
        return on_token(token);
      });
    }
    py::dict d;
    d["tokens"] = r.tokens;
    d["stop_reason"] = r.stop_reason;
    d["context_length"] = r.context_length;
    d["prefill_tok_s"] = r.prefill_tok_s;
    d["decode_tok_s"] = r.decode_tok_s;
    return d;
  }

  void close() {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(mu);
    model.reset();
  }
};

// The options as (name, text) pairs, read by the runtime's one parser; `progress` (or None) is
// called with (stage, done, total) holding the GIL.
using OptionItems = std::vector<std::pair<std::string, std::string>>;
LoadOptions load_options(const OptionItems& items, const py::object& progress) {
  LoadOptions o = parse_load_options(items);
  if (!progress.is_none()) {
    auto fn = std::make_shared<py::object>(progress);
    o.on_progress = [fn](const LoadProgress& p) {
      py::gil_scoped_acquire gil;
      (*fn)(load_stage_name(p.stage), p.done, p.total);
    };
  }
  return o;
}

py::dict device_info_dict() {
  DeviceInfo i;
  {
    py::gil_scoped_release nogil;
    i = etwebgpu::device_info();
  }
  py::dict d;
  d["summary"] = i.summary;
  d["description"] = i.description;
  d["adapter_type"] = i.adapter_type;
  d["vendor_id"] = i.vendor_id;
  d["timestamp_query"] = i.timestamp_query;
  d["subgroups"] = i.subgroups;
  d["shader_f16"] = i.shader_f16;
  d["max_buffer_size"] = i.max_buffer_size;
  d["max_storage_binding"] = i.max_storage_binding;
  d["pipeline_cache_dir"] = i.pipeline_cache_dir;  // "" when off
  d["pipeline_cache_hits"] = i.pipeline_cache_hits;
  d["pipeline_cache_misses"] = i.pipeline_cache_misses;
  d["pipeline_cache_stores"] = i.pipeline_cache_stores;
  d["pipeline_cache_rejected"] = i.pipeline_cache_rejected;
  return d;
}

}  // namespace

PYBIND11_MODULE(_etwebgpu, m) {
  m.doc() = "etwebgpu C++ runtime (use the etwebgpu package, not this module)";

  // etwebgpu.Error (etwebgpu/errors.py) carries the C++ kind ("Format", "InvalidArgument", ...)
  // as .kind, with one subclass per kind.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      py::object cls = py::module_::import("etwebgpu.errors").attr("error_class")(error_kind_name(e.kind()));
      py::object exc = cls(e.what());
      exc.attr("kind") = error_kind_name(e.kind());
      PyErr_SetObject(cls.ptr(), exc.ptr());
    }
  });

  py::class_<GenerateOptions>(m, "GenerateOptions")
      .def(py::init<>())
      .def_readwrite("max_new_tokens", &GenerateOptions::max_new_tokens)
      .def_readwrite("temperature", &GenerateOptions::temperature)
      .def_readwrite("top_k", &GenerateOptions::top_k)
      .def_readwrite("top_p", &GenerateOptions::top_p)
      .def_readwrite("seed", &GenerateOptions::seed)
      .def_readwrite("stop_tokens", &GenerateOptions::stop_tokens)
      .def_readwrite("context_length", &GenerateOptions::context_length);

  py::class_<PyModel>(m, "Model")
      .def_property_readonly("inputs", [](PyModel& s) {
        s.check_open();
        py::list l;
        for (auto& io : s.model->inputs()) l.append(io_dict(io));
        return l;
      })
      .def_property_readonly("outputs", [](PyModel& s) {
        s.check_open();
        py::list l;
        for (auto& io : s.model->outputs()) l.append(io_dict(io));
        return l;
      })
      .def_property_readonly("gpu_bytes", [](PyModel& s) {
        s.check_open();
        return s.model->gpu_bytes();
      })
      .def_property_readonly("num_state_buffers", [](PyModel& s) {
        s.check_open();
        return s.model->num_state_buffers();
      })
      .def("run", &PyModel::run, py::arg("inputs"), py::arg("profile") = false)
      .def("profile", &PyModel::profile)
      .def("reset_state", &PyModel::reset_state)
      .def("generate", &PyModel::generate, py::arg("prompt"), py::arg("options"), py::arg("on_token"))
      .def("close", &PyModel::close);

  // The load runs without the GIL; a progress callback takes it back for each report. An
  // exception the callback raises aborts the load and reaches the caller.
  m.def(
      "load",
      [](const std::string& path, const OptionItems& items, const py::object& progress) {
        auto opts = load_options(items, progress);
        auto pm = std::make_unique<PyModel>();
        py::gil_scoped_release nogil;
        pm->model = Model::load(path, opts);
        return pm;
      },
      py::arg("path"), py::arg("options"), py::arg("progress"));
  m.def(
      "load_bytes",
      [](py::buffer data, const OptionItems& items, const py::object& progress) {
        auto opts = load_options(items, progress);
        py::buffer_info info = data.request();
        const auto* p = static_cast<const uint8_t*>(info.ptr);
        std::vector<uint8_t> bytes(p, p + info.size * info.itemsize);
        auto pm = std::make_unique<PyModel>();
        py::gil_scoped_release nogil;
        pm->model = Model::load_bytes(std::move(bytes), opts);
        return pm;
      },
      py::arg("data"), py::arg("options"), py::arg("progress"));
  // name -> (values, help, repeatable): what load() accepts, from the runtime's table.
  m.def("load_options", [] {
    py::dict d;
    for (const auto& o : load_option_list()) d[py::str(o.name)] = py::make_tuple(o.values, o.help, o.repeatable);
    return d;
  });
  m.def("device_info", &device_info_dict);
}
