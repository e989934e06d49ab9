// What the runtime's own layers above a Model (text generation) need from it; not public API.
#pragma once
#include <mutex>
#include <vector>

#include "etwebgpu/etwebgpu.h"
#include "graph/graph.h"

namespace etwebgpu::detail {

struct ModelAccess {
  static graph::Graph& graph(Model& m);
  // The model's run lock, held by a loop of runs (generate) so that a Model::run or reset_state
  // from another thread fails as it would during one run. Throws when a run is in progress.
  static std::unique_lock<std::mutex> lock_runs(Model& m);
  // Under lock_runs: Model::run's input checks and upload (inputs `keep` marks only take their
  // shape: their buffers hold what earlier queued work wrote), then the plan with `extend`'s
  // commands and reads appended, queued without waiting (graph::Graph::execute_async); no output
  // is read back.
  static gpu::Context::Ticket queue_run(Model& m, const std::vector<HostTensor>& inputs, const std::vector<bool>& keep,
                                        const graph::Graph::Extend& extend);
};

}  // namespace etwebgpu::detail
