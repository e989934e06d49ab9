#include "etwebgpu/npy.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "etwebgpu/error.h"
#include "format/escape.h"

namespace etwebgpu {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error(ErrorKind::Format, "npy: " + msg); }

// Minimal parser for the Python-literal header dict numpy writes.
struct HeaderParser {
  std::string_view s;
  size_t i = 0;
  void ws() { while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i; }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) { ++i; return true; }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(fmt::format("header: expected '{}' at position {} in \"{}\"", c, i, format::escape_untrusted(s)));
  }
  std::string quoted() {
    ws();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) fail(fmt::format("header: expected a quoted string at position {}", i));
    const char q = s[i++];
    const size_t start = i;
    while (i < s.size() && s[i] != q) ++i;
    if (i >= s.size()) fail("header: unterminated string");
    return std::string(s.substr(start, i++ - start));
  }
  bool boolean() {
    ws();
    if (s.substr(i, 4) == "True") { i += 4; return true; }
    if (s.substr(i, 5) == "False") { i += 5; return false; }
    fail(fmt::format("header: expected True or False at position {}", i));
  }
  std::vector<int64_t> shape() {
    expect('(');
    std::vector<int64_t> dims;
    while (!eat(')')) {
      ws();
      if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i])))
        fail(fmt::format("header: expected a non-negative integer in shape at position {}", i));
      int64_t v = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v))
          fail("header: shape dimension overflows");
        ++i;
      }
      ws();
      if (i < s.size() && s[i] == 'L') ++i;  // Python 2 long suffix
      dims.push_back(v);
      if (!eat(',')) { expect(')'); break; }
    }
    return dims;
  }
};

struct Descr { DType dtype; const char* text; };
constexpr Descr kDescrs[] = {
    {DType::Float32, "<f4"}, {DType::Float64, "<f8"}, {DType::Float16, "<f2"}, {DType::Int32, "<i4"},
    {DType::Int64, "<i8"},   {DType::Bool, "|b1"},    {DType::UInt8, "|u1"},   {DType::Int8, "|i1"},
};

DType parse_descr(const std::string& d) {
  if (d.size() < 2) fail(fmt::format("unsupported descr '{}'", format::escape_untrusted(d)));
  char order = d[0];
  std::string body = d.substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=') { order = '='; body = d; }
  for (const auto& e : kDescrs) {
    if (body != std::string(e.text + 1)) continue;
    const bool single = dtype_size(e.dtype) == 1;
    if (!single && order == '>') fail(fmt::format("big-endian descr '{}' is not supported", format::escape_untrusted(d)));
    return e.dtype;
  }
  fail(fmt::format("unsupported descr '{}' (supported: float32/64, float16, int32/64, bool, uint8, int8)",
                   format::escape_untrusted(d)));
}

const char* descr_of(DType t) {
  for (const auto& e : kDescrs)
    if (e.dtype == t) return e.text;
  throw Error(ErrorKind::InvalidArgument, fmt::format("npy: cannot write dtype {}", dtype_name(t)));
}

}  // namespace

HostTensor parse_npy(std::span<const uint8_t> b) {
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (b.size() < 10) fail(fmt::format("file is {} bytes, too short for the header", b.size()));
  if (std::memcmp(b.data(), kMagic, 6) != 0) fail("bad magic (expected \\x93NUMPY)");
  const uint8_t major = b[6], minor = b[7];
  uint64_t hlen, hstart;
  if (major == 1) {
    hlen = uint64_t{b[8]} | (uint64_t{b[9]} << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) fail("file too short for a version 2 header");
    hlen = uint64_t{b[8]} | (uint64_t{b[9]} << 8) | (uint64_t{b[10]} << 16) | (uint64_t{b[11]} << 24);
    hstart = 12;
  } else {
    fail(fmt::format("unsupported format version {}.{}", major, minor));
  }
  if (hlen > b.size() - hstart) fail(fmt::format("header length {} exceeds file size {}", hlen, b.size()));
  HeaderParser p{std::string_view(reinterpret_cast<const char*>(b.data() + hstart), hlen)};
  std::string descr;
  bool have_descr = false, have_order = false, have_shape = false, fortran = false;
  std::vector<int64_t> shape;
  p.expect('{');
  while (!p.eat('}')) {
    const std::string key = p.quoted();
    p.expect(':');
    if (key == "descr") { descr = p.quoted(); have_descr = true; }
    else if (key == "fortran_order") { fortran = p.boolean(); have_order = true; }
    else if (key == "shape") { shape = p.shape(); have_shape = true; }
    else fail(fmt::format("header: unexpected key '{}'", format::escape_untrusted(key)));
    if (!p.eat(',')) { p.expect('}'); break; }
  }
  p.ws();
  if (p.i != p.s.size()) fail("header: trailing characters after the dict");
  if (!have_descr || !have_order || !have_shape) fail("header: missing one of 'descr', 'fortran_order', 'shape'");
  if (fortran) fail("fortran_order True is not supported (only C order)");
  const DType dt = parse_descr(descr);
  uint64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) fail("shape element count overflows");
  uint64_t nbytes;
  if (__builtin_mul_overflow(n, uint64_t{dtype_size(dt)}, &nbytes)) fail("data byte size overflows");
  const uint64_t have = b.size() - hstart - hlen;
  if (have != nbytes)
    fail(fmt::format("data is {} bytes but shape {} of {} needs {}", have, shape_str(shape), dtype_name(dt), nbytes));
  HostTensor t(dt, shape);
  if (nbytes) std::memcpy(t.data.data(), b.data() + hstart + hlen, nbytes);
  return t;
}

HostTensor read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::Io, "cannot open " + path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw Error(ErrorKind::Io, "cannot read " + path);
  try {
    return parse_npy(bytes);
  } catch (const Error& e) {
    throw Error(e.kind(), std::string(e.what()) + " (" + path + ")");
  }
}

std::vector<uint8_t> encode_npy(const HostTensor& t) {
  const uint64_t expect = static_cast<uint64_t>(t.numel()) * dtype_size(t.dtype);
  if (t.data.size() != expect)
    throw Error(ErrorKind::InvalidArgument, fmt::format("npy: tensor holds {} bytes but shape {} of {} needs {}",
                                                        t.data.size(), shape_str(t.shape), dtype_name(t.dtype), expect));
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += std::to_string(t.shape[i]) + (t.shape.size() == 1 ? "," : i + 1 < t.shape.size() ? ", " : "");
  shape += ")";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr_of(t.dtype), shape);
  // numpy pads the header with spaces and a newline so the data starts 64-byte aligned.
  const bool v2 = header.size() + 1 + 10 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(v2 ? 2 : 1), 0};
  const uint64_t hl = header.size();
  out.push_back(static_cast<uint8_t>(hl));
  out.push_back(static_cast<uint8_t>(hl >> 8));
  if (v2) {
    out.push_back(static_cast<uint8_t>(hl >> 16));
    out.push_back(static_cast<uint8_t>(hl >> 24));
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), t.data.begin(), t.data.end());
  return out;
}

void write_npy(const std::string& path, const HostTensor& t) {
  const std::vector<uint8_t> bytes = encode_npy(t);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error(ErrorKind::Io, "cannot create " + path);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw Error(ErrorKind::Io, "cannot write " + path);
}

}  // namespace etwebgpu
