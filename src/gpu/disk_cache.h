// A persistent key -> blob store on disk: where the native surface keeps what Dawn compiles
// (Tint's SPIR-V, the Vulkan pipeline cache data) so a later process skips the compile. Plain
// C++, no WebGPU: the surface hands its load/store to Dawn's blob-cache hooks.
//
// One file per key, named by a hash of the key, holding the key itself, the value and a checksum
// of both; written to a temporary file and renamed, so concurrent processes storing the same key
// never leave a half-written entry. A file that is short, long, for another key or fails its
// checksum is a miss (counted in `rejected`), never handed back. Nothing here throws: a cache
// that cannot read or write only costs compile time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace etwebgpu::gpu {

class DiskCache {
 public:
  // The directory the environment asks for: $ETWEBGPU_CACHE_DIR, else $XDG_CACHE_HOME/etwebgpu,
  // else $HOME/.cache/etwebgpu; empty for ETWEBGPU_CACHE_DIR=off (or no home).
  static std::string configured_dir();

  // Creates `dir` (and its parents) when missing; disabled when `dir` is empty or cannot be
  // created.
  explicit DiskCache(std::string dir);
  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // Dawn's load protocol: returns the stored value's size (0 on a miss) and copies it into `value`
  // when `value_size` is large enough. Dawn asks for the size, then for the bytes, and aborts if the
  // two answers differ: the entry read for the first call is kept and answers the second, whatever
  // another process writes to the file in between.
  size_t load(const void* key, size_t key_size, void* value, size_t value_size);
  void store(const void* key, size_t key_size, const void* value, size_t value_size);

  struct Stats {
    uint64_t hits = 0;      // values handed back
    uint64_t misses = 0;    // keys with no usable entry
    uint64_t stores = 0;    // entries written
    uint64_t rejected = 0;  // entries found but unusable (truncated, corrupt, another key); also misses
    uint64_t write_failures = 0;
  };
  Stats stats() const;

  // The file that holds `key` (tests corrupt it).
  std::string path_for(const void* key, size_t key_size) const;

 private:
  // The entry for `key` read from disk and checked; false when absent or unusable.
  bool read_entry(const std::string& key, std::vector<uint8_t>& value);
  std::string dir_;
  mutable std::mutex mu_;
  Stats stats_;
  std::string last_key_;  // the entry of the last size query (see load)
  std::vector<uint8_t> last_value_;
};

}  // namespace etwebgpu::gpu
