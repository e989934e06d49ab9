// `etwebgpu demo` and `etwebgpu example --write`: the embedded default model.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "etwebgpu/compare.h"
#include "etwebgpu/device.h"
#include "etwebgpu/etwebgpu.h"
#include "etwebgpu/example_model.h"
#include "etwebgpu/npy.h"
#include "tools/commands.h"

using namespace etwebgpu;

int cmd_demo() {
  auto em = make_example_model();
  std::printf("adapter: %s\n", device_info().summary.c_str());
  std::printf("model:   embedded example (%zu bytes): %s\n", em.pte.size(), em.description);
  auto model = Model::load_bytes(em.pte);
  auto out = model->run({em.input});
  const float* p = out[0].as<float>();
  std::printf("output:  %s %s =", dtype_name(out[0].dtype), shape_str(out[0].shape).c_str());
  int best = 0;
  for (int64_t i = 0; i < out[0].numel(); ++i) {
    std::printf(" %.4f", p[i]);
    if (p[i] > p[best]) best = static_cast<int>(i);
  }
  std::printf("\nclass:   %d\n", best);
  auto r = compare_tensors(out[0], em.expected, em.atol, em.rtol);
  std::printf("check:   vs float64 CPU reference: %s\n", r.message.c_str());
  return r.ok ? 0 : 1;
}

int cmd_example_write(const std::string& dir) {
  auto em = make_example_model();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/model.pte", std::ios::binary).write(reinterpret_cast<const char*>(em.pte.data()), em.pte.size());
  write_npy(dir + "/input_0.npy", em.input);
  write_npy(dir + "/expected_0.npy", em.expected);
  std::printf("wrote %s/model.pte, input_0.npy, expected_0.npy (%s)\n", dir.c_str(), em.description);
  return 0;
}
