#include "kernel/wgsl.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "etwebgpu/error.h"

namespace etwebgpu::gpu {
extern const std::pair<std::string_view, std::string_view> kEmbeddedShaders[];
extern const unsigned kEmbeddedShaderCount;
}  // namespace etwebgpu::gpu

namespace etwebgpu::kernel {

std::string_view shader_source(std::string_view name) {
  if (const char* dir = std::getenv("ETWEBGPU_WGSL_DIR")) {
    static std::mutex mu;
    static std::map<std::string, std::string, std::less<>> loaded;  // stable storage for the views
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = loaded.find(name); it != loaded.end()) return it->second;
    std::ifstream f(std::string(dir) + "/" + std::string(name) + ".wgsl");
    if (f) {
      std::stringstream ss;
      ss << f.rdbuf();
      return loaded.emplace(std::string(name), ss.str()).first->second;
    }
  }
  for (unsigned i = 0; i < gpu::kEmbeddedShaderCount; ++i)
    if (gpu::kEmbeddedShaders[i].first == name) return gpu::kEmbeddedShaders[i].second;
  throw Error(ErrorKind::Internal, "no embedded shader named '" + std::string(name) + "'");
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> parts;
  size_t at = 0;
  for (size_t k; (k = s.find(sep, at)) != std::string_view::npos; at = k + sep.size()) parts.push_back(s.substr(at, k - at));
  parts.push_back(s.substr(at));
  return parts;
}

}  // namespace

std::string preprocess(std::string_view src, const std::set<std::string>& defines, std::string_view label) {
  // One frame per open #if: whether its enclosing text is kept, whether a branch was taken yet,
  // whether the current branch is kept, and whether #else was seen.
  struct Frame { bool parent, taken, on, in_else; };
  std::vector<Frame> stack;
  std::string out;
  out.reserve(src.size());
  size_t line_no = 0;
  auto fail = [&](const std::string& what) {
    throw Error(ErrorKind::Internal, std::string(label) + ".wgsl line " + std::to_string(line_no) + ": " + what);
  };
  auto eval = [&](std::string_view expr) {
    bool any = false;
    for (auto alt : split(expr, "||")) {
      bool all = true;
      for (auto term : split(alt, "&&")) {
        term = trim(term);
        bool neg = !term.empty() && term.front() == '!';
        if (neg) term = trim(term.substr(1));
        if (term.empty()) fail("empty condition in '" + std::string(expr) + "'");
        for (char c : term)
          if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') fail("bad name '" + std::string(term) + "'");
        all = all && (defines.count(std::string(term)) > 0) != neg;
      }
      any = any || all;
    }
    return any;
  };
  auto kept = [&] { return stack.empty() || stack.back().on; };
  size_t at = 0;
  while (at < src.size()) {
    size_t end = src.find('\n', at);
    if (end == std::string_view::npos) end = src.size();
    std::string_view line = src.substr(at, end - at);
    ++line_no;
    std::string_view t = trim(line);
    if (t.substr(0, 3) == "#if" && (t.size() == 3 || std::isspace(static_cast<unsigned char>(t[3])))) {
      bool parent = kept();
      bool on = parent && eval(t.substr(3));
      stack.push_back({parent, on, on, false});
    } else if (t.substr(0, 5) == "#elif") {
      if (stack.empty() || stack.back().in_else) fail("#elif without #if");
      Frame& f = stack.back();
      f.on = f.parent && !f.taken && eval(t.substr(5));
      f.taken = f.taken || f.on;
    } else if (t == "#else") {
      if (stack.empty() || stack.back().in_else) fail("#else without #if");
      Frame& f = stack.back();
      f.on = f.parent && !f.taken;
      f.taken = true;
      f.in_else = true;
    } else if (t == "#endif") {
      if (stack.empty()) fail("#endif without #if");
      stack.pop_back();
    } else if (!t.empty() && t.front() == '#') {
      fail("unknown directive '" + std::string(t) + "'");
    } else if (kept()) {
      out.append(line);
      out.push_back('\n');
    }
    at = end + 1;
  }
  if (!stack.empty()) fail("#if without #endif at the end of the file");
  return out;
}

}  // namespace etwebgpu::kernel
