// The device layer sits at the bottom: src/gpu includes only itself and the public headers, and
// holds no shader library (the kernel layer looks shaders up and hands gpu::Context their text).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace {

TEST(Layering, GpuLayerIncludesOnlyItselfAndThePublicHeadersAndEmbedsNoShader) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(ETWEBGPU_SOURCE_DIR) / "src" / "gpu";
  const std::regex include(R"re(#include\s+"([^/"]+)/)re");
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::string ext = e.path().extension().string();
    EXPECT_NE(ext, ".wgsl") << e.path() << ": shader files belong to the kernel layer's library";
    if (ext != ".h" && ext != ".cpp") continue;
    ++files;
    std::ifstream f(e.path());
    std::stringstream s;
    s << f.rdbuf();
    std::string text = s.str();
    for (std::sregex_iterator m(text.begin(), text.end(), include), end; m != end; ++m) {
      std::string top = (*m)[1];
      EXPECT_TRUE(top == "gpu" || top == "etwebgpu") << e.path() << " includes " << m->str();
    }
    EXPECT_EQ(text.find("kEmbeddedShaders"), std::string::npos) << e.path();
    EXPECT_EQ(text.find("shader_source"), std::string::npos) << e.path();
  }
  EXPECT_GE(files, 4u);
}

}  // namespace
