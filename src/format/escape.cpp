#include "format/escape.h"

#include <cstdint>

namespace etwebgpu::format {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] and its code point; 0 when malformed.
size_t utf8_sequence(std::string_view s, size_t i, uint32_t& cp) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  size_t len;
  uint32_t min;
  if (b0 >= 0xc2 && b0 <= 0xdf) { len = 2; cp = b0 & 0x1f; min = 0x80; }
  else if (b0 >= 0xe0 && b0 <= 0xef) { len = 3; cp = b0 & 0x0f; min = 0x800; }
  else if (b0 >= 0xf0 && b0 <= 0xf4) { len = 4; cp = b0 & 0x07; min = 0x10000; }
  else return 0;
  if (s.size() - i < len) return 0;
  for (size_t k = 1; k < len; ++k) {
    const uint8_t b = byte(i + k);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

// Code points a terminal does not simply draw: C1 controls, bidirectional controls (which can
// reorder what the reader sees), line/paragraph separators, the BOM.
bool invisible(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x200e && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

void append_hex(std::string& out, uint8_t b) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 15];
}

}  // namespace

std::string escape_untrusted(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const uint8_t b = static_cast<uint8_t>(s[i]);
    if (b == '\\') {
      out += "\\\\";
      ++i;
    } else if (b >= 0x20 && b < 0x7f) {
      out += static_cast<char>(b);
      ++i;
    } else if (uint32_t cp = 0; b >= 0x80) {
      const size_t len = utf8_sequence(s, i, cp);
      if (len == 0 || invisible(cp)) {
        for (size_t k = 0; k < (len ? len : 1); ++k) append_hex(out, static_cast<uint8_t>(s[i + k]));
        i += len ? len : 1;
      } else {
        out.append(s.substr(i, len));
        i += len;
      }
    } else {
      append_hex(out, b);
      ++i;
    }
  }
  return out;
}

}  // namespace etwebgpu::format
