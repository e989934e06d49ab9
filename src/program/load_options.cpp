// LoadOptions as text: the table every front end (CLI, Python, JavaScript, generate) builds its
// options from, so an option enters in one place.
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "etwebgpu/etwebgpu.h"

namespace etwebgpu {

namespace {

// One option: its description, how text sets it and how it reads back.
struct OptionDef {
  LoadOptionInfo info;
  void (*set)(LoadOptions&, const std::string&);
  std::string (*get)(const LoadOptions&);
};

[[noreturn]] void bad_value(const std::string& name, const std::string& value, const std::string& expected) {
  throw Error(ErrorKind::InvalidArgument, "load option " + name + ": '" + value + "' is not " + expected);
}

bool parse_switch(const std::string& name, const std::string& v) {
  if (v == "on" || v == "true" || v == "1") return true;
  if (v == "off" || v == "false" || v == "0") return false;
  bad_value(name, v, "on|off (true|false, 1|0)");
}

std::string switch_text(bool b) { return b ? "on" : "off"; }

// An integer >= 1 with an optional K/M/G/T suffix (also KiB, MiB, ...).
uint64_t parse_bytes(const std::string& name, const std::string& v) {
  size_t i = 0;
  uint64_t n = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    uint64_t d = static_cast<uint64_t>(v[i] - '0');
    if (n > (UINT64_MAX - d) / 10) bad_value(name, v, "a byte count below 2^64");
    n = n * 10 + d;
    ++i;
  }
  if (i == 0) bad_value(name, v, "a byte count (e.g. 1073741824, 512M, 16G)");
  std::string suffix = v.substr(i);
  int shift = 0;
  if (suffix.empty() || suffix == "B") shift = 0;
  else if (suffix == "K" || suffix == "KiB") shift = 10;
  else if (suffix == "M" || suffix == "MiB") shift = 20;
  else if (suffix == "G" || suffix == "GiB") shift = 30;
  else if (suffix == "T" || suffix == "TiB") shift = 40;
  else bad_value(name, v, "a byte count (suffixes K, M, G, T)");
  if (shift && n > (UINT64_MAX >> shift)) bad_value(name, v, "a byte count below 2^64");
  n <<= shift;
  if (n == 0) bad_value(name, v, "a positive byte count");
  return n;
}

int64_t parse_count(const std::string& name, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  long long x = v.empty() ? 0 : std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE || x < 0) bad_value(name, v, "an integer >= 0");
  return x;
}

const std::vector<OptionDef>& defs() {
  static const std::vector<OptionDef> d = {
      {{"method", "NAME", "the program's method to load"},
       [](LoadOptions& o, const std::string& v) {
         if (v.empty()) bad_value("method", v, "a method name");
         o.method = v;
       },
       [](const LoadOptions& o) { return o.method; }},
      {{"precision", "fp32|fp16|auto",
        "storage of float tensors: fp32, fp16 (half the memory; needs the adapter's shader-f16) or auto (fp16 where "
        "available)"},
       [](LoadOptions& o, const std::string& v) { o.precision = parse_precision(v); },
       [](const LoadOptions& o) { return std::string(precision_name(o.precision)); }},
      {{"fuse", "on|off",
        "rewrites at load (calls on constants evaluated once, attention, CSE, RMSNorm/RoPE, elementwise and epilogue "
        "fusion, layouts read in place); off: one kernel per op, for comparisons"},
       [](LoadOptions& o, const std::string& v) { o.fuse = parse_switch("fuse", v); },
       [](const LoadOptions& o) { return switch_text(o.fuse); }},
      {{"plan_memory", "on|off",
        "tensors whose lives do not meet share buffers and views share their input's; off: one buffer per tensor"},
       [](LoadOptions& o, const std::string& v) { o.plan_memory = parse_switch("plan_memory", v); },
       [](const LoadOptions& o) { return switch_text(o.plan_memory); }},
      {{"poison_storage", "on|off", "debugging: storage every run writes starts as NaN instead of zeros"},
       [](LoadOptions& o, const std::string& v) { o.poison_storage = parse_switch("poison_storage", v); },
       [](const LoadOptions& o) { return switch_text(o.poison_storage); }},
      {{"max_gpu_bytes", "BYTES", "refuse, before allocating, a model needing more device memory than this"},
       [](LoadOptions& o, const std::string& v) { o.max_gpu_bytes = parse_bytes("max_gpu_bytes", v); },
       [](const LoadOptions& o) { return std::to_string(o.max_gpu_bytes); }},
      {{"sdpa_occupancy_floor", "N", "et_vk.sdpa: below this B*H*S_q the per-entry QK kernel is used (speed only)"},
       [](LoadOptions& o, const std::string& v) { o.sdpa_occupancy_floor = parse_count("sdpa_occupancy_floor", v); },
       [](const LoadOptions& o) { return std::to_string(o.sdpa_occupancy_floor); }},
      {{"force_route", "OP=ROUTE", "force a kernel route, e.g. conv=direct (see docs/OPS.md); repeatable", true},
       [](LoadOptions& o, const std::string& v) {
         size_t eq = v.find('=');
         if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) bad_value("force_route", v, "OP=ROUTE");
         o.force_route[v.substr(0, eq)] = v.substr(eq + 1);
       },
       [](const LoadOptions& o) {
         std::string s;
         for (auto& [k, r] : o.force_route) s += (s.empty() ? "" : ",") + k + "=" + r;
         return s;
       }},
  };
  return d;
}

const OptionDef& find_def(const std::string& name) {
  for (auto& d : defs())
    if (d.info.name == name) return d;
  std::string known;
  for (auto& d : defs()) known += (known.empty() ? "" : ", ") + d.info.name;
  throw Error(ErrorKind::InvalidArgument, "unknown load option '" + name + "' (known: " + known + ")");
}

}  // namespace

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::FP16: return "fp16";
    case Precision::Auto: return "auto";
  }
  return "?";
}

Precision parse_precision(const std::string& text) {
  if (text == "fp32") return Precision::FP32;
  if (text == "fp16") return Precision::FP16;
  if (text == "auto") return Precision::Auto;
  throw Error(ErrorKind::InvalidArgument, "precision '" + text + "' (expected fp32, fp16 or auto)");
}

const char* load_stage_name(LoadProgress::Stage s) {
  switch (s) {
    case LoadProgress::Stage::Read: return "read";
    case LoadProgress::Stage::Upload: return "upload";
    case LoadProgress::Stage::Compile: return "compile";
  }
  return "?";
}

const std::vector<LoadOptionInfo>& load_option_list() {
  static const std::vector<LoadOptionInfo> list = [] {
    std::vector<LoadOptionInfo> l;
    for (auto& d : defs()) l.push_back(d.info);
    return l;
  }();
  return list;
}

void set_load_option(LoadOptions& o, const std::string& name, const std::string& value) {
  find_def(name).set(o, value);
}

std::string get_load_option(const LoadOptions& o, const std::string& name) { return find_def(name).get(o); }

LoadOptions parse_load_options(const std::vector<std::pair<std::string, std::string>>& items, LoadOptions base) {
  for (auto& [k, v] : items) set_load_option(base, k, v);
  return base;
}

}  // namespace etwebgpu
