// fuzz_seeds vkgraph OUT_DIR FILE.pte...: writes every delegate blob of each .pte to OUT_DIR
//   (the seeds of vkgraph_reader_fuzz).
// fuzz_seeds npy OUT_DIR: writes small .npy files of every supported dtype, rank 0..3 and an
//   empty tensor (the seeds of npy_reader_fuzz, next to the fixtures' own .npy files).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "etwebgpu/error.h"
#include "etwebgpu/tensor.h"
#include "format/ir.h"
#include "etwebgpu/npy.h"

using namespace etwebgpu;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, const uint8_t* data, size_t size) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

int vkgraph_seeds(const fs::path& out_dir, char** ptes, int count) {
  int written = 0;
  for (int a = 0; a < count; ++a) {
    const fs::path pte = ptes[a];
    std::ifstream in(pte, std::ios::binary);
    auto bytes = std::make_shared<const format::Bytes>(std::istreambuf_iterator<char>(in),
                                                       std::istreambuf_iterator<char>());
    // Fixtures are all named model.pte: the folder name tells them apart.
    const std::string stem = pte.parent_path().filename().string() + "_" + pte.stem().string();
    const auto program = format::read_program(bytes);
    for (const auto& plan : program.plans) {
      for (size_t d = 0; d < plan.delegates.size(); ++d, ++written) {
        const auto& blob = plan.delegates[d].blob;
        write_file(out_dir / (stem + "_" + plan.name + "_" + std::to_string(d) + ".vh00"), blob.data(), blob.size());
      }
    }
  }
  return written;
}

int npy_seeds(const fs::path& out_dir) {
  const DType dtypes[] = {DType::Float32, DType::Int32, DType::Int64, DType::Bool,
                          DType::UInt8,   DType::Int8,  DType::Float16, DType::Float64};
  const std::vector<std::vector<int64_t>> shapes = {{}, {3}, {2, 3}, {2, 1, 2}, {0, 4}};
  int written = 0;
  for (DType dt : dtypes) {
    for (size_t s = 0; s < shapes.size(); ++s, ++written) {
      HostTensor t(dt, shapes[s]);
      for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<uint8_t>(i * 37 + 1);
      const auto bytes = encode_npy(t);
      write_file(out_dir / (std::string(dtype_name(dt)) + "_rank" + std::to_string(shapes[s].size()) + "_" +
                            std::to_string(s) + ".npy"),
                 bytes.data(), bytes.size());
    }
  }
  return written;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc >= 3 ? argv[1] : "";
  if ((mode != "vkgraph" || argc < 4) && mode != "npy") {
    std::cerr << "usage: fuzz_seeds vkgraph OUT_DIR FILE.pte... | fuzz_seeds npy OUT_DIR\n";
    return 2;
  }
  const fs::path out_dir = argv[2];
  fs::create_directories(out_dir);
  try {
    const int written = mode == "npy" ? npy_seeds(out_dir) : vkgraph_seeds(out_dir, argv + 3, argc - 3);
    std::cout << written << " seeds written to " << out_dir.string() << "\n";
  } catch (const Error& e) {
    std::cerr << "fuzz_seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
