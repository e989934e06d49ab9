// Strings read from a file (operator names, backend ids, method names) reach people through
// errors, `inspect` and `run`; hostile bytes in them (ESC sequences, invalid UTF-8) must arrive
// escaped as \xNN, never raw.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "etwebgpu/builder.h"
#include "format/describe.h"
#include "format/escape.h"
#include "format/ir.h"
#include "support/op_harness.h"

using namespace etwebgpu;
using namespace etwebgpu::testing;

namespace {

// ESC ] 0 ; ... BEL sets a terminal's title; ESC [ 2 J clears the screen; 0xff is never UTF-8.
const std::string kHostile = std::string("\x1b[2J") + "\xff";

bool has_raw_hostile_bytes(const std::string& s) {
  return s.find('\x1b') != std::string::npos || s.find('\xff') != std::string::npos;
}

// Replaces every same-length occurrence of `from` in `bytes` (flatbuffer strings are
// length-prefixed, so an equal-length replacement keeps the file well-formed).
int replace_all(std::vector<uint8_t>& bytes, const std::string& from, const std::string& to) {
  EXPECT_EQ(from.size(), to.size());
  int n = 0;
  for (auto it = bytes.begin(); (it = std::search(it, bytes.end(), from.begin(), from.end())) != bytes.end(); ++n)
    it = std::copy(to.begin(), to.end(), it);
  return n;
}

std::vector<uint8_t> add_graph_with_op(const std::string& op_name) {
  GraphBuilder g;
  auto a = g.input(DType::Float32, {4});
  auto o = g.tensor(DType::Float32, {4});
  g.op(op_name, {a, a, g.int_(1), o});
  g.output(o);
  return g.serialize();
}

std::string load_message(std::vector<uint8_t> bytes, const LoadOptions& opts = {}) {
  return load_error([&] { Model::load_bytes(std::move(bytes), opts); });
}

TEST(EscapeUntrusted, PrintableAsciiAndValidUtf8PassUnchanged) {
  EXPECT_EQ(format::escape_untrusted("aten.add.Tensor"), "aten.add.Tensor");
  EXPECT_EQ(format::escape_untrusted("gewichte_\xc3\xbc_\xe2\x82\xac_\xf0\x9f\x98\x80"),
            "gewichte_\xc3\xbc_\xe2\x82\xac_\xf0\x9f\x98\x80");  // ü € 😀
  EXPECT_EQ(format::escape_untrusted(""), "");
}

TEST(EscapeUntrusted, ControlsInvalidUtf8AndBackslashBecomeHexEscapes) {
  EXPECT_EQ(format::escape_untrusted("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(format::escape_untrusted(std::string("x\0y", 3)), "x\\x00y");
  EXPECT_EQ(format::escape_untrusted("tab\tnl\ndel\x7f"), "tab\\x09nl\\x0adel\\x7f");
  EXPECT_EQ(format::escape_untrusted("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(format::escape_untrusted("\xc3"), "\\xc3");                       // truncated sequence
  EXPECT_EQ(format::escape_untrusted("\xc0\xaf"), "\\xc0\\xaf");              // overlong '/'
  EXPECT_EQ(format::escape_untrusted("\xed\xa0\x80"), "\\xed\\xa0\\x80");     // UTF-16 surrogate
  EXPECT_EQ(format::escape_untrusted("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(format::escape_untrusted("\xc2\x9b"), "\\xc2\\x9b");              // C1 CSI control
  EXPECT_EQ(format::escape_untrusted("a\xe2\x80\xae" "b"), "a\\xe2\\x80\\xaeb");  // right-to-left override
  EXPECT_EQ(format::escape_untrusted("C:\\x1b"), "C:\\\\x1b");  // a literal backslash stays distinguishable
}

TEST(EscapedOutput, UnsupportedDelegateOperatorNameIsEscapedInTheLoadError) {
  const std::string name = "aten.add" + kHostile + ".Tensor";
  const std::string msg = load_message(add_graph_with_op(name));
  EXPECT_NE(msg.find("Unsupported error"), std::string::npos) << msg;
  EXPECT_NE(msg.find("aten.add\\x1b[2J\\xff.Tensor"), std::string::npos) << msg;
  EXPECT_FALSE(has_raw_hostile_bytes(msg)) << msg;
}

TEST(EscapedOutput, UnsupportedKernelCallOperatorIsEscapedInTheLoadError) {
  ProgramBuilder p;
  auto x = p.tensor(DType::Float32, {4});
  auto out = p.tensor(DType::Float32, {4});
  p.input(x);
  p.kernel("aten::" + kHostile, "out", {x, out});
  p.output(out);
  const std::string msg = load_message(p.serialize());
  EXPECT_NE(msg.find("aten::\\x1b[2J\\xff.out"), std::string::npos) << msg;
  EXPECT_FALSE(has_raw_hostile_bytes(msg)) << msg;
}

TEST(EscapedOutput, ForeignBackendIdIsEscapedInTheLoadErrorAndInspect) {
  auto bytes = add_graph_with_op("aten.add.Tensor");
  const std::string hostile_id = "Vulk\x1b]0;pwn\x07\xfe";  // as long as "VulkanBackend"
  ASSERT_EQ(replace_all(bytes, "VulkanBackend", hostile_id), 1);
  const std::string msg = load_message(bytes);
  EXPECT_NE(msg.find("delegate backend Vulk\\x1b]0;pwn\\x07\\xfe"), std::string::npos) << msg;
  EXPECT_FALSE(has_raw_hostile_bytes(msg) || msg.find('\x07') != std::string::npos) << msg;

  const auto program = format::read_program(std::make_shared<const format::Bytes>(bytes));
  const std::string text = format::describe_program(program);
  EXPECT_NE(text.find("Vulk\\x1b]0;pwn\\x07\\xfe"), std::string::npos) << text;
  EXPECT_FALSE(has_raw_hostile_bytes(text)) << text;
}

TEST(EscapedOutput, MethodNameIsEscapedInTheLoadErrorAndInspect) {
  auto bytes = add_graph_with_op("aten.add.Tensor");
  const std::string hostile_method = "\x1b[2J\xff" "ab";  // as long as "forward"
  ASSERT_EQ(replace_all(bytes, "forward", hostile_method), 1);
  const std::string msg = load_message(bytes);  // asks for "forward", which no longer exists
  EXPECT_NE(msg.find("program has: '\\x1b[2J\\xffab'"), std::string::npos) << msg;
  EXPECT_FALSE(has_raw_hostile_bytes(msg)) << msg;

  LoadOptions opts;
  opts.method = "x\x1b" "y";
  const std::string asked = load_message(bytes, opts);
  EXPECT_NE(asked.find("no execution plan named 'x\\x1by'"), std::string::npos) << asked;

  const std::string text = format::describe_program(format::read_program(std::make_shared<const format::Bytes>(bytes)));
  EXPECT_NE(text.find("plan '\\x1b[2J\\xffab'"), std::string::npos) << text;
  EXPECT_FALSE(has_raw_hostile_bytes(text)) << text;
}

TEST(EscapedOutput, VkGraphJsonOfAnInvalidUtf8OperatorNameIsValidJson) {
  // Found by vkgraph_reader_fuzz (fuzz/regressions/vkgraph_reader/): the JSON dump threw.
  GraphBuilder g;
  auto a = g.input(DType::Float32, {4});
  auto o = g.tensor(DType::Float32, {4});
  g.op("aten.neg" + kHostile, {a, o});
  g.output(o);
  const auto blob = g.serialize_blob(GraphBuilder::ConstantPlacement::InlineBlob);
  const auto ir = format::read_vkgraph(format::ByteSpan(blob.bytes.data(), blob.bytes.size()), format::Program{});
  std::string text;
  ASSERT_NO_THROW(text = format::vkgraph_to_json(ir));
  EXPECT_FALSE(has_raw_hostile_bytes(text)) << text;  // ESC written as \u001b, 0xff replaced
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["chain"][0]["name"].get<std::string>(), "aten.neg\x1b[2J\xef\xbf\xbd");  // U+FFFD
}

TEST(EscapedOutput, InspectAndRunOfTheCliNeverEchoRawBytes) {
  const auto dir = std::filesystem::temp_directory_path() / ("etwebgpu_escape_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "hostile.pte").string();
  auto bytes = add_graph_with_op("aten.add" + kHostile + ".Tensor");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::string out;
  run_cli("inspect " + path, &out);
  EXPECT_NE(out.find("aten.add\\x1b[2J\\xff.Tensor"), std::string::npos) << out;
  EXPECT_FALSE(has_raw_hostile_bytes(out)) << out;
  const int code = run_cli("run " + path, &out);
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("aten.add\\x1b[2J\\xff.Tensor"), std::string::npos) << out;
  EXPECT_FALSE(has_raw_hostile_bytes(out)) << out;
  std::filesystem::remove_all(dir);
}

}  // namespace
