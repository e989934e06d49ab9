#include "gpu/disk_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace etwebgpu::gpu {

namespace {

namespace fs = std::filesystem;

// File layout: magic, key size, value size, checksum (u64 each), then the key and the value.
constexpr char kMagic[8] = {'E', 'T', 'W', 'B', 'L', 'O', 'B', '1'};
constexpr size_t kHeader = 32;
constexpr uint64_t kMaxEntry = 1ull << 30;  // a larger file is not ours

// FNV-1a, 64 bits: names the file and checks its contents against accidental damage (the key
// stored in the file makes a name collision a miss, not a wrong answer).
uint64_t fnv1a(const uint8_t* p, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}
uint64_t checksum(const std::string& key, const uint8_t* value, size_t value_size) {
  return fnv1a(value, value_size, fnv1a(reinterpret_cast<const uint8_t*>(key.data()), key.size()));
}
void put_u64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
uint64_t get_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

std::string DiskCache::configured_dir() {
  const char* e = std::getenv("ETWEBGPU_CACHE_DIR");
  if (e && *e) return std::string(e) == "off" ? std::string() : std::string(e);
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/etwebgpu";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/etwebgpu";
  return {};
}

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_, ec) || access(dir_.c_str(), W_OK) != 0) dir_.clear();
}

std::string DiskCache::path_for(const void* key, size_t key_size) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.blob",
                static_cast<unsigned long long>(fnv1a(static_cast<const uint8_t*>(key), key_size)));
  return dir_ + "/" + name;
}

bool DiskCache::read_entry(const std::string& key, std::vector<uint8_t>& value) {
  std::ifstream f(path_for(key.data(), key.size()), std::ios::binary | std::ios::ate);
  if (!f) return false;
  std::streamoff size = f.tellg();
  auto reject = [&] {
    ++stats_.rejected;
    return false;
  };
  if (size < static_cast<std::streamoff>(kHeader) || static_cast<uint64_t>(size) > kMaxEntry) return reject();
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  f.seekg(0);
  if (!f.read(reinterpret_cast<char*>(bytes.data()), size)) return reject();
  uint64_t key_size = get_u64(&bytes[8]), value_size = get_u64(&bytes[16]);
  // key_size is checked first, so the sum below cannot wrap.
  if (std::memcmp(bytes.data(), kMagic, 8) != 0 || key_size != key.size() || value_size == 0 ||
      value_size > kMaxEntry || kHeader + key_size + value_size != bytes.size())
    return reject();
  const uint8_t* v = bytes.data() + kHeader + key_size;
  if (std::memcmp(bytes.data() + kHeader, key.data(), key_size) != 0 ||
      get_u64(&bytes[24]) != checksum(key, v, value_size))
    return reject();
  value.assign(v, v + value_size);
  return true;
}

size_t DiskCache::load(const void* key, size_t key_size, void* value, size_t value_size) {
  if (!enabled()) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  std::string k(static_cast<const char*>(key), key_size);
  if (k != last_key_) {
    last_key_.clear();
    if (!read_entry(k, last_value_)) {
      ++stats_.misses;
      return 0;
    }
    last_key_ = std::move(k);
  }
  size_t size = last_value_.size();
  if (value && value_size >= size) {
    std::memcpy(value, last_value_.data(), size);
    ++stats_.hits;
    last_key_.clear();
  }
  return size;
}

void DiskCache::store(const void* key, size_t key_size, const void* value, size_t value_size) {
  if (!enabled() || value_size == 0) return;
  static std::atomic<uint64_t> counter{0};
  std::string path = path_for(key, key_size);
  // A name of its own per writer: processes and threads storing the same key each rename a
  // whole file into place.
  std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  std::string k(static_cast<const char*>(key), key_size);
  const auto* v = static_cast<const uint8_t*>(value);
  uint8_t header[kHeader];
  std::memcpy(header, kMagic, 8);
  put_u64(header + 8, key_size);
  put_u64(header + 16, value_size);
  put_u64(header + 24, checksum(k, v, value_size));
  bool ok;
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(header), kHeader);
    f.write(k.data(), static_cast<std::streamsize>(key_size));
    f.write(reinterpret_cast<const char*>(v), static_cast<std::streamsize>(value_size));
    f.close();
    ok = static_cast<bool>(f);
  }
  std::error_code ec;
  if (ok) fs::rename(tmp, path, ec);
  std::lock_guard<std::mutex> lock(mu_);
  if (!ok || ec) {
    fs::remove(tmp, ec);
    ++stats_.write_failures;
    return;
  }
  ++stats_.stores;
}

DiskCache::Stats DiskCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace etwebgpu::gpu
