#include "etwebgpu/error.h"

namespace etwebgpu {

const char* error_kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::Io: return "Io";
    case ErrorKind::Format: return "Format";
    case ErrorKind::Unsupported: return "Unsupported";
    case ErrorKind::InvalidArgument: return "InvalidArgument";
    case ErrorKind::Limit: return "Limit";
    case ErrorKind::Gpu: return "Gpu";
    case ErrorKind::Internal: return "Internal";
  }
  return "Unknown";
}

}  // namespace etwebgpu
