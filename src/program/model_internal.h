// What the runtime's own layers above a Model (text generation) need from it; not public API.
#pragma once
#include <vector>

#include "etwebgpu/etwebgpu.h"
#include "graph/graph.h"

namespace etwebgpu::detail {

struct ModelAccess {
  static graph::Graph& graph(Model& m);
  // Model::run's input checks and upload, then one submit of the plan with `extend`'s commands
  // and reads appended; no output is read back.
  static void run_extended(Model& m, const std::vector<HostTensor>& inputs, const graph::Graph::Extend& extend);
};

}  // namespace etwebgpu::detail
