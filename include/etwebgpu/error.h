// The one exception type etwebgpu throws. Every failure carries a kind and a message naming the problem.
#pragma once
#include <stdexcept>
#include <string>

namespace etwebgpu {

enum class ErrorKind {
  Io,           // file could not be read or written
  Format,       // malformed .pte / VkGraph / .npy
  Unsupported,  // an operator, dtype or feature we do not implement
  InvalidArgument,  // wrong inputs at run time (count, dtype, shape)
  Limit,        // a device or runtime limit would be exceeded
  Gpu,          // the WebGPU device reported an error (validation, OOM, lost)
  Internal,
};

const char* error_kind_name(ErrorKind k);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg)
      : std::runtime_error(std::string(error_kind_name(kind)) + " error: " + msg), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace etwebgpu
