// .npy read/write: every supported dtype round trips; malformed headers are clear Format errors.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "etwebgpu/error.h"
#include "etwebgpu/npy.h"
#include "format_test_util.h"

using namespace etwebgpu;
using namespace etwebgpu::format;

namespace {

std::vector<uint8_t> npy_bytes(int major, const std::string& header, size_t data_len) {
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  const uint32_t hl = static_cast<uint32_t>(header.size());
  b.push_back(static_cast<uint8_t>(hl));
  b.push_back(static_cast<uint8_t>(hl >> 8));
  if (major >= 2) {
    b.push_back(static_cast<uint8_t>(hl >> 16));
    b.push_back(static_cast<uint8_t>(hl >> 24));
  }
  b.insert(b.end(), header.begin(), header.end());
  b.resize(b.size() + data_len, 0x11);
  return b;
}

void expect_format(const std::vector<uint8_t>& b, const std::string& needle) {
  try {
    parse_npy(b);
    ADD_FAILURE() << "accepted; expected an error mentioning " << needle;
  } catch (const etwebgpu::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(NpyRoundTrip, EveryDtypeAndShapeSurvivesEncodeParse) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {5}, {2, 3}, {1, 2, 3, 4}};
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::Int32, DType::Int64, DType::Bool,
                   DType::UInt8, DType::Int8}) {
    for (const auto& shape : shapes) {
      HostTensor t(dt, shape);
      for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<uint8_t>(i * 7 + 1);
      if (dt == DType::Bool)
        for (auto& v : t.data) v &= 1;
      const auto enc = encode_npy(t);
      EXPECT_EQ((enc.size() - t.data.size()) % 64, 0u) << "data starts 64-byte aligned";
      const HostTensor back = parse_npy(enc);
      EXPECT_EQ(back.dtype, dt);
      EXPECT_EQ(back.shape, shape);
      EXPECT_EQ(back.data, t.data);
    }
  }
}

TEST(NpyRoundTrip, WriteAndReadFile) {
  const auto path = std::filesystem::temp_directory_path() / ("etwebgpu_npy_" + std::to_string(::getpid()) + ".npy");
  const HostTensor t = HostTensor::from<float>(DType::Float32, {2, 2}, std::vector<float>{1.f, -2.f, 3.5f, 0.f});
  write_npy(path.string(), t);
  const HostTensor r = read_npy(path.string());
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(r.to_f64(), (std::vector<double>{1.0, -2.0, 3.5, 0.0}));
  std::filesystem::remove(path);
  try {
    read_npy(path.string());
    ADD_FAILURE() << "missing file accepted";
  } catch (const etwebgpu::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
  }
}

TEST(NpyParse, AcceptsVersion2HeadersAndNumpySpellings) {
  const auto b = npy_bytes(2, "{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"<i8\"}\n", 24);
  const HostTensor t = parse_npy(b);
  EXPECT_EQ(t.dtype, DType::Int64);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3}));
  const HostTensor s = parse_npy(npy_bytes(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }   \n", 1));
  EXPECT_EQ(s.dtype, DType::Bool);
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(parse_npy(npy_bytes(1, "{'descr': '<u1', 'fortran_order': False, 'shape': (2, 1)}", 2)).dtype,
            DType::UInt8);
  EXPECT_EQ(parse_npy(npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)}", 8)).dtype,
            DType::Float64);
}

TEST(NpyParse, MalformedInputsAreClearFormatErrors) {
  expect_format({0x93, 'N', 'U'}, "too short");
  auto ok = npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
  EXPECT_NO_THROW(parse_npy(ok));
  auto bad = ok;
  bad[1] = 'X';
  expect_format(bad, "bad magic");
  bad = ok;
  bad[6] = 9;
  expect_format(bad, "version 9.0");
  expect_format(npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8), "fortran_order");
  expect_format(npy_bytes(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8), "big-endian");
  expect_format(npy_bytes(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16), "unsupported descr");
  expect_format(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 7), "needs 8");
  expect_format(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 9), "needs 8");
  expect_format(npy_bytes(1, "{'descr': '<f4', 'shape': (2,), }", 8), "missing");
  expect_format(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8), "non-negative");
  expect_format(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8), "unexpected key");
  expect_format(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) ", 8), "expected");
  expect_format(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999)}", 0),
                "overflow");
  auto trunc = npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 0);
  trunc[8] = 0xff;  // header longer than the file
  expect_format(trunc, "exceeds file size");
}

TEST(NpyConformance, FixtureInputsMatchTheManifest) {
  using namespace etwebgpu::format::fixtures;
  ETWEBGPU_REQUIRE_CONFORMANCE();
  std::ifstream mf(conformance_dir() / "manifest.json");
  const auto manifest = nlohmann::json::parse(mf);
  size_t checked = 0;
  for (const auto& [name, c] : manifest.at("cases").items()) {
    for (const char* kind : {"inputs", "outputs"}) {
      for (const auto& io : c.at(kind)) {
        const auto path = conformance_dir() / name / io.at("file").get<std::string>();
        if (!std::filesystem::exists(path)) continue;
        const HostTensor t = read_npy(path.string());
        EXPECT_EQ(dtype_name(t.dtype), io.at("dtype").get<std::string>()) << path;
        EXPECT_EQ(t.shape, io.at("shape").get<std::vector<int64_t>>()) << path;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 30u);
}
