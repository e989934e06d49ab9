// Shared helpers for the format tests: fixture location and file reading.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "format/ir.h"

namespace etwebgpu::format::fixtures {

inline std::filesystem::path conformance_dir() {
  if (const char* e = std::getenv("ETWEBGPU_CONFORMANCE_DIR")) return e;
  return std::filesystem::path(ETWEBGPU_SOURCE_DIR) / ".." / "shared" / "conformance";
}

inline std::vector<std::string> conformance_cases() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(conformance_dir(), ec))
    if (e.is_directory() && std::filesystem::exists(e.path() / "model.pte")) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

inline std::shared_ptr<const Bytes> read_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  auto b = std::make_shared<Bytes>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return b;
}

inline std::shared_ptr<const Bytes> load_case(const std::string& name) {
  return read_bytes(conformance_dir() / name / "model.pte");
}

// Skips without fixtures; fails instead when $ETWEBGPU_REQUIRE_FIXTURES=1 (CI).
#define ETWEBGPU_REQUIRE_CONFORMANCE()                                                                  \
  do {                                                                                                  \
    if (::etwebgpu::format::fixtures::conformance_cases().empty()) {                                     \
      const char* req_ = std::getenv("ETWEBGPU_REQUIRE_FIXTURES");                                        \
      if (req_ && std::string(req_) == "1")                                                              \
        FAIL() << "conformance fixtures not found in " << ::etwebgpu::format::fixtures::conformance_dir() \
               << " and ETWEBGPU_REQUIRE_FIXTURES=1";                                                     \
      GTEST_SKIP() << "conformance fixtures not found in " << ::etwebgpu::format::fixtures::conformance_dir() \
                   << " (set ETWEBGPU_CONFORMANCE_DIR)";                                                \
    }                                                                                                   \
  } while (0)

}  // namespace etwebgpu::format::fixtures
