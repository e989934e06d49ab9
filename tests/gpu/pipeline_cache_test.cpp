// The persistent pipeline cache. DiskCache, the on-disk store behind Dawn's blob cache, without a
// device: Dawn's two-call load protocol, damaged entries, concurrent writers, the directory the
// environment picks. PipelineCache, end to end through the CLI: a second process loads what the
// first compiled, gets the same results, survives a damaged cache, and "off" writes nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <thread>

#include "gpu/disk_cache.h"
#include "support/op_harness.h"

using etwebgpu::gpu::DiskCache;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("etwebgpu_disk_cache_" + name + "_" + std::to_string(getpid()))) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// Dawn's way of loading: the size, then the bytes into a buffer of that size.
std::string dawn_load(DiskCache& c, const std::string& key) {
  size_t n = c.load(key.data(), key.size(), nullptr, 0);
  if (n == 0) return {};
  std::string v(n, '\0');
  EXPECT_EQ(c.load(key.data(), key.size(), v.data(), n), n);
  return v;
}
void store(DiskCache& c, const std::string& key, const std::string& value) {
  c.store(key.data(), key.size(), value.data(), value.size());
}

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Restores an environment variable when the test ends.
struct EnvVar {
  std::string name;
  std::optional<std::string> old;
  EnvVar(const char* n, const char* value) : name(n) {
    if (const char* v = std::getenv(n)) old = v;
    if (value) setenv(n, value, 1);
    else unsetenv(n);
  }
  ~EnvVar() {
    if (old) setenv(name.c_str(), old->c_str(), 1);
    else unsetenv(name.c_str());
  }
};

TEST(DiskCache, StoredValuesComeBackInALaterInstanceAndAreCounted) {
  TempDir d("roundtrip");
  {
    DiskCache c(d.path.string());
    ASSERT_TRUE(c.enabled());
    EXPECT_EQ(dawn_load(c, "key-a"), "");
    store(c, "key-a", "value of a");
    store(c, "key-b", std::string(100000, 'b'));
    auto s = c.stats();
    EXPECT_EQ(s.misses, 1u);
    EXPECT_EQ(s.stores, 2u);
  }
  DiskCache c(d.path.string());  // as a second process would
  EXPECT_EQ(dawn_load(c, "key-a"), "value of a");
  EXPECT_EQ(dawn_load(c, "key-b"), std::string(100000, 'b'));
  EXPECT_EQ(dawn_load(c, "key-c"), "");
  auto s = c.stats();
  EXPECT_EQ(s.hits, 2u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.stores, 0u);
  EXPECT_EQ(s.rejected, 0u);
  size_t files = 0;
  for (auto& e : fs::directory_iterator(d.path)) files += e.path().extension() == ".blob";
  EXPECT_EQ(files, 2u) << "one file per key, no temporary files left";
}

TEST(DiskCache, TheSecondCallOfALoadAnswersWithWhatTheFirstRead) {
  // Dawn aborts when the size it was told and the bytes it gets differ: another process
  // replacing the entry between the two calls must not change the answer.
  TempDir d("two_calls");
  DiskCache c(d.path.string()), other(d.path.string());
  store(c, "k", "short");
  size_t n = c.load("k", 1, nullptr, 0);
  ASSERT_EQ(n, 5u);
  store(other, "k", "a much longer value");
  std::string v(n, '\0');
  EXPECT_EQ(c.load("k", 1, v.data(), n), n);
  EXPECT_EQ(v, "short");
  EXPECT_EQ(dawn_load(c, "k"), "a much longer value");  // the next load reads the file again
}

TEST(DiskCache, DamagedEntriesAreMissesNeverAnswers) {
  TempDir d("damaged");
  DiskCache c(d.path.string());
  const std::string key = "pipeline key", value(4096, 'v');
  const std::string path = c.path_for(key.data(), key.size());
  auto damage = [&](auto&& f) {
    store(c, key, value);
    std::string bytes = file_bytes(path);
    f(bytes);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  };
  const std::vector<std::pair<std::string, std::function<void(std::string&)>>> cases = {
      {"truncated", [](std::string& b) { b.resize(b.size() / 2); }},
      {"one byte short", [](std::string& b) { b.pop_back(); }},
      {"one byte long", [](std::string& b) { b.push_back('x'); }},
      {"empty", [](std::string& b) { b.clear(); }},
      {"header only", [](std::string& b) { b.resize(32); }},
      {"value byte flipped", [](std::string& b) { b[b.size() - 10] ^= 1; }},
      {"key byte flipped", [](std::string& b) { b[33] ^= 1; }},
      {"sizes changed", [](std::string& b) { b[16] ^= 1; }},
      {"magic changed", [](std::string& b) { b[0] = 'X'; }},
      {"garbage", [](std::string& b) { b = std::string(b.size(), '\xff'); }},
  };
  uint64_t rejected = 0;
  for (auto& [name, f] : cases) {
    damage(f);
    EXPECT_EQ(c.load(key.data(), key.size(), nullptr, 0), 0u) << name;
    EXPECT_EQ(c.stats().rejected, ++rejected) << name;
  }
  store(c, key, value);  // what Dawn does after the miss: the entry is whole again
  EXPECT_EQ(dawn_load(c, key), value);
}

TEST(DiskCache, OffOrAnUnwritableDirectoryDisablesItQuietly) {
  {
    EnvVar e("ETWEBGPU_CACHE_DIR", "off");
    EXPECT_EQ(DiskCache::configured_dir(), "");
  }
  DiskCache off("");
  EXPECT_FALSE(off.enabled());
  store(off, "k", "v");
  EXPECT_EQ(dawn_load(off, "k"), "");
  DiskCache under_a_file("/dev/null/etwebgpu");  // cannot be created, even by root
  EXPECT_FALSE(under_a_file.enabled());
  store(under_a_file, "k", "v");
  EXPECT_EQ(dawn_load(under_a_file, "k"), "");
  EXPECT_EQ(under_a_file.stats().stores, 0u);
}

TEST(DiskCache, DirectoryComesFromTheEnvironment) {
  EnvVar dir("ETWEBGPU_CACHE_DIR", nullptr), xdg("XDG_CACHE_HOME", nullptr), home("HOME", "/home/u");
  EXPECT_EQ(DiskCache::configured_dir(), "/home/u/.cache/etwebgpu");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(DiskCache::configured_dir(), "/xdg/etwebgpu");
  setenv("ETWEBGPU_CACHE_DIR", "/explicit", 1);
  EXPECT_EQ(DiskCache::configured_dir(), "/explicit");
}

TEST(DiskCache, ConcurrentWritersOfOneKeyNeverLeaveAPartialEntry) {
  // Each thread has its own instance, as separate processes would; values differ in size so a
  // mix of two writes could not pass as either.
  TempDir d("concurrent");
  DiskCache first(d.path.string());
  const std::string key = "shared key";
  std::vector<std::string> values;
  for (int i = 0; i < 4; ++i) values.push_back(std::string(1000 + 50000 * i, static_cast<char>('a' + i)));
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      DiskCache c(d.path.string());
      for (int i = 0; i < 50; ++i) {
        store(c, key, values[t]);
        std::string v = dawn_load(c, key);
        if (std::find(values.begin(), values.end(), v) == values.end()) ++bad;
        if (c.stats().rejected || c.stats().write_failures) ++bad;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(std::distance(fs::directory_iterator(d.path), fs::directory_iterator()), 1) << "no temporary files left";
}

// What one `run --cache-stats` did with the cache.
struct RunStats {
  uint64_t hits = 0, misses = 0, stores = 0, rejected = 0;
};
RunStats parse_stats(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(R"((\d+) hits, (\d+) misses, (\d+) stores, (\d+) rejected)"))) {
    ADD_FAILURE() << "no pipeline cache counts in: " << out;
    return {};
  }
  return RunStats{std::stoull(m[1]), std::stoull(m[2]), std::stoull(m[3]), std::stoull(m[4])};
}
// Every file of the cache with its contents and modification time.
std::map<std::string, std::pair<std::string, fs::file_time_type>> listing(const fs::path& dir) {
  std::map<std::string, std::pair<std::string, fs::file_time_type>> m;
  for (auto& e : fs::directory_iterator(dir)) m[e.path().filename()] = {file_bytes(e.path()), e.last_write_time()};
  return m;
}

// The example model (written to `dir` once) run against its golden output into dir/out_name, with
// the cache the environment names; its output in `out`.
void run_example(const fs::path& dir, const std::string& out_name, std::string* out) {
  if (!fs::exists(dir / "model.pte")) {
    EXPECT_EQ(etwebgpu::testing::run_cli("example --write " + dir.string(), out), 0) << *out;
  }
  EXPECT_EQ(etwebgpu::testing::run_cli("run " + (dir / "model.pte").string() + " -i " + (dir / "input_0.npy").string() +
                                           " -e " + (dir / "expected_0.npy").string() + " -o " +
                                           (dir / out_name).string() + " --cache-stats",
                                       out),
            0)
      << *out;
}

// A temporary folder whose cache/ the child processes use.
struct CacheRun {
  TempDir d;
  fs::path cache = d.path / "cache";
  EnvVar env{"ETWEBGPU_CACHE_DIR", cache.c_str()};
  explicit CacheRun(const std::string& name) : d(name) {}
  std::string output(const std::string& out_name) const { return file_bytes(d.path / out_name / "output_0.npy"); }
};

TEST(PipelineCache, ASecondProcessLoadsEveryPipelineFromTheCacheAndStoresNothing) {
  ETW_REQUIRE_GPU();
  CacheRun r("second_process");
  std::string out;
  // The first run finding the cache empty also proves the chained descriptor: the device was
  // created with it and Dawn called both functions.
  run_example(r.d.path, "out1", &out);
  RunStats first = parse_stats(out);
  EXPECT_EQ(first.hits, 0u) << out;
  EXPECT_GT(first.misses, 0u) << out;
  EXPECT_GT(first.stores, 0u) << out;
  auto before = listing(r.cache);
  EXPECT_EQ(before.size(), first.stores);
  run_example(r.d.path, "out2", &out);
  RunStats second = parse_stats(out);
  EXPECT_EQ(second.hits, first.misses) << "every entry the first run looked for, the second found: " << out;
  EXPECT_EQ(second.misses, 0u) << out;
  EXPECT_EQ(second.stores, 0u) << out;
  EXPECT_EQ(listing(r.cache), before) << "the second process wrote nothing";
  EXPECT_EQ(r.output("out2"), r.output("out1"));
}

TEST(PipelineCache, DamagedEntriesAreRecompiledWithTheSameResults) {
  ETW_REQUIRE_GPU();
  CacheRun r("damaged_run");
  std::string out;
  run_example(r.d.path, "out1", &out);
  size_t n = 0;
  for (auto& [name, entry] : listing(r.cache)) {
    std::string bytes = entry.first;
    if (n++ % 2) bytes.resize(bytes.size() / 2);  // truncated
    else bytes[bytes.size() / 2] ^= 0x55;        // a flipped byte
    std::ofstream(r.cache / name, std::ios::binary | std::ios::trunc) << bytes;
  }
  ASSERT_GT(n, 0u);
  run_example(r.d.path, "out2", &out);
  RunStats damaged = parse_stats(out);
  EXPECT_EQ(damaged.hits, 0u) << out;
  EXPECT_EQ(damaged.rejected, n) << out;
  EXPECT_EQ(damaged.stores, n) << "each damaged entry was written again: " << out;
  EXPECT_EQ(r.output("out2"), r.output("out1"));
  run_example(r.d.path, "out3", &out);
  EXPECT_EQ(parse_stats(out).stores, 0u) << out;
}

TEST(PipelineCache, OffOrAnUnwritableDirectoryWritesNothingAndStillRuns) {
  ETW_REQUIRE_GPU();
  TempDir d("off");
  EnvVar xdg("XDG_CACHE_HOME", (d.path / "xdg").c_str()), home("HOME", (d.path / "home").c_str());
  for (const char* setting : {"off", "/dev/null/etwebgpu"}) {
    EnvVar e("ETWEBGPU_CACHE_DIR", setting);
    std::string out;
    run_example(d.path, "out", &out);
    EXPECT_NE(out.find("pipeline cache: off"), std::string::npos) << setting << out;
  }
  // (Mesa's lavapipe keeps its own shader cache under XDG_CACHE_HOME: only ours must be absent.)
  EXPECT_FALSE(fs::exists(d.path / "xdg" / "etwebgpu"));
  EXPECT_FALSE(fs::exists(d.path / "home" / ".cache" / "etwebgpu"));
}

}  // namespace
