// The WGSL preprocessor: #if/#elif/#else/#endif over defined names, and its errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "etwebgpu/error.h"
#include "kernel/wgsl.h"

using etwebgpu::Error;
using etwebgpu::kernel::preprocess;

TEST(WgslPreprocess, KeepsTheBranchOfTheFirstTrueCondition) {
  const char* src = "a\n#if X_F16\nhalf\n#elif X_INT\nint\n#else\nfloat\n#endif\nb\n";
  EXPECT_EQ(preprocess(src, {"X_F16"}, "t"), "a\nhalf\nb\n");
  EXPECT_EQ(preprocess(src, {"X_INT"}, "t"), "a\nint\nb\n");
  EXPECT_EQ(preprocess(src, {}, "t"), "a\nfloat\nb\n");
  EXPECT_EQ(preprocess(src, {"X_F16", "X_INT"}, "t"), "a\nhalf\nb\n");
}

TEST(WgslPreprocess, NegationAndAndBindTighterThanOr) {
  const char* src = "#if !A && B || C\nyes\n#endif\n";
  EXPECT_EQ(preprocess(src, {"B"}, "t"), "yes\n");
  EXPECT_EQ(preprocess(src, {"A", "B"}, "t"), "");
  EXPECT_EQ(preprocess(src, {"A", "C"}, "t"), "yes\n");
}

TEST(WgslPreprocess, NestedBlocksInsideADroppedBranchStayDropped) {
  const char* src = "#if A\n#if B\nab\n#else\na_not_b\n#endif\n#else\nnot_a\n#endif\n";
  EXPECT_EQ(preprocess(src, {"B"}, "t"), "not_a\n");
  EXPECT_EQ(preprocess(src, {"A"}, "t"), "a_not_b\n");
  EXPECT_EQ(preprocess(src, {"A", "B"}, "t"), "ab\n");
}

TEST(WgslPreprocess, MalformedDirectivesNameTheShaderAndLine) {
  auto msg = [](const char* src) {
    try {
      preprocess(src, {}, "shader_x");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg("#if A\nx\n").find("shader_x.wgsl line 2: #if without #endif"), std::string::npos);
  EXPECT_NE(msg("x\n#endif\n").find("line 2: #endif without #if"), std::string::npos);
  EXPECT_NE(msg("#else\n").find("#else without #if"), std::string::npos);
  EXPECT_NE(msg("#if A\n#else\n#elif B\n#endif\n").find("#elif without #if"), std::string::npos);
  EXPECT_NE(msg("#if\n#endif\n").find("empty condition"), std::string::npos);
  EXPECT_NE(msg("#if A-B\n#endif\n").find("bad name"), std::string::npos);
  EXPECT_NE(msg("#define A\n").find("unknown directive"), std::string::npos);
}

TEST(WgslOverrideDir, AFileInEtwebgpuWgslDirReplacesTheEmbeddedShader) {
  auto dir = std::filesystem::temp_directory_path() / "etwebgpu_wgsl_override_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "binary_math.wgsl") << "// replaced\n";
  const std::string embedded(etwebgpu::kernel::shader_source("unary_math"));
  setenv("ETWEBGPU_WGSL_DIR", dir.c_str(), 1);
  std::string replaced(etwebgpu::kernel::shader_source("binary_math"));
  std::string kept(etwebgpu::kernel::shader_source("unary_math"));  // no file there: the embedded text
  unsetenv("ETWEBGPU_WGSL_DIR");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(replaced, "// replaced\n");
  EXPECT_EQ(kept, embedded);
  EXPECT_NE(std::string(etwebgpu::kernel::shader_source("binary_math")), "// replaced\n");  // unset: embedded again
}
