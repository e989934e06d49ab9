// Malformed .pte files and delegate blobs: each defect is a clear Error(Format), never a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>

#include "etwebgpu/builder.h"
#include "etwebgpu/error.h"
#include "format/describe.h"
#include "format/ir.h"
#include "format_test_util.h"
#include "program_generated.h"
#include "vkgraph_generated.h"

using namespace etwebgpu;
using namespace etwebgpu::format;
namespace fb = executorch_flatbuffer;

namespace {

using File = std::vector<uint8_t>;

File small_file(GraphBuilder::Options opt = {}) {
  GraphBuilder g;
  auto x = g.input(DType::Float32, {1, 3, 4, 5});
  auto w = g.constant_f32({1, 3, 1, 5}, std::vector<float>(15, 0.5f));
  auto w2 = g.constant_f32({2}, {1.f, 2.f});
  auto a = g.int_(1);
  auto t = g.tensor(DType::Float32, {1, 3, 4, 5}, 0);
  auto vl = g.value_list({t, x});
  auto o = g.tensor(DType::Float32, {1, 3, 4, 5}, 1);
  g.op("aten.add.Tensor", {x, w, a, t});
  g.op("aten.cat.default", {vl, a, w2, o});
  g.output(o);
  return g.serialize(opt);
}

template <class T>
void put(File& f, size_t off, T v) {
  std::memcpy(f.data() + off, &v, sizeof(T));
}
template <class T>
T get(const File& f, size_t off) {
  T v;
  std::memcpy(&v, f.data() + off, sizeof(T));
  return v;
}
size_t off_of(const File& f, const void* p) { return static_cast<size_t>(static_cast<const uint8_t*>(p) - f.data()); }
// File offset of a present scalar field of a generated table (the tables inherit Table privately).
size_t field_at(const File& f, const void* table, flatbuffers::voffset_t vt) {
  const auto o = reinterpret_cast<const flatbuffers::Table*>(table)->GetOptionalFieldOffset(vt);
  EXPECT_NE(o, 0) << "field is absent";
  return off_of(f, table) + o;
}

// Runs the whole decode path: program, every delegate graph, the description.
void decode_all(const File& f) {
  const Program p = read_program(std::make_shared<Bytes>(f));
  for (const ExecutionPlan& plan : p.plans)
    for (const Delegate& d : plan.delegates) describe_vkgraph(read_vkgraph(d.blob, p));
  describe_program(p);
}

// Expects Error(Format) whose message contains `needle`.
template <class F>
void expect_format_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const etwebgpu::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// Offset in the file of the delegate blob (segment or inline).
size_t blob_offset(const File& f) {
  const auto copy = std::make_shared<Bytes>(f);
  const Program p = read_program(copy);
  return static_cast<size_t>(p.plans.at(0).delegates.at(0).blob.data() - copy->data());
}

const vkgraph::VkGraph* graph_of(const File& f) { return vkgraph::GetVkGraph(f.data() + blob_offset(f) + 32); }

}  // namespace

TEST(PteMalformed, EveryTruncationLengthIsAFormatError) {
  for (bool seg : {true, false}) {
    GraphBuilder::Options opt;
    opt.delegate_in_segment = seg;
    const File full = small_file(opt);
    ASSERT_NO_THROW(decode_all(full));
    for (size_t len = 0; len < full.size(); ++len) {
      const File cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
      try {
        decode_all(cut);
        ADD_FAILURE() << "truncation to " << len << " of " << full.size() << " bytes was accepted";
      } catch (const etwebgpu::Error& e) {
        ASSERT_EQ(e.kind(), ErrorKind::Format) << "len " << len << ": " << e.what();
      }
    }
  }
}

TEST(PteMalformed, WrongProgramIdentifier) {
  File f = small_file();
  std::memcpy(f.data() + 4, "ET13", 4);
  expect_format_error([&] { decode_all(f); }, "ET13");
  std::memcpy(f.data() + 4, "ZZ12", 4);
  expect_format_error([&] { decode_all(f); }, "not ET12");
}

TEST(PteMalformed, ExtendedHeaderFieldsOutOfRange) {
  const File good = small_file();
  const uint64_t program_size = get<uint64_t>(good, 16), base = get<uint64_t>(good, 24), dsize = get<uint64_t>(good, 32);
  File f = good;
  put<uint32_t>(f, 12, 16);
  expect_format_error([&] { decode_all(f); }, "minimum 24");
  f = good;
  put<uint64_t>(f, 16, good.size() + 1);
  expect_format_error([&] { decode_all(f); }, "program_size");
  f = good;
  put<uint64_t>(f, 24, program_size - 8);
  expect_format_error([&] { decode_all(f); }, "inside the program");
  f = good;
  put<uint64_t>(f, 32, dsize + 1);
  expect_format_error([&] { decode_all(f); }, "segment_data_size");
  f = good;
  put<uint64_t>(f, 32, std::numeric_limits<uint64_t>::max() - base + 1);  // base + size wraps to 0
  expect_format_error([&] { decode_all(f); }, "segment_data_size");
  f = good;
  put<uint64_t>(f, 32, dsize - 1);  // the last segment now sticks out of the segment area
  expect_format_error([&] { decode_all(f); }, "exceeds the segment data size");
  f = good;
  put<uint64_t>(f, 16, 20);  // program cut inside the flatbuffer
  expect_format_error([&] { decode_all(f); }, "");
}

TEST(PteMalformed, SegmentOffsetsOutOfRange) {
  File f = small_file();
  const auto* p = fb::GetProgram(f.data());
  const auto* seg = p->segments()->Get(2);
  // Segments 0 and 1 both start at offset 0 (omitted); the named-data segment's offset is stored.
  const size_t at = field_at(f, seg, fb::DataSegment::VT_OFFSET);
  put<uint64_t>(f, at, uint64_t{1} << 40);
  expect_format_error([&] { decode_all(f); }, "exceeds the segment data size");
  put<uint64_t>(f, at, std::numeric_limits<uint64_t>::max() - 4);  // offset + size wraps
  expect_format_error([&] { decode_all(f); }, "exceeds the segment data size");
}

TEST(PteMalformed, ProgramValueIdsOutOfRange) {
  const File good = small_file();
  const auto* plan = fb::GetProgram(good.data())->execution_plan()->Get(0);
  const auto* call = plan->chains()->Get(0)->instructions()->Get(0)->instr_args_as_DelegateCall();
  File f = good;
  put<int32_t>(f, off_of(good, call->args()->data()), 1000);
  expect_format_error([&] { decode_all(f); }, "value id 1000 out of range");
  f = good;
  put<int32_t>(f, off_of(good, plan->inputs()->data()), -3);
  expect_format_error([&] { decode_all(f); }, "value id -3 out of range");
  f = good;
  put<int32_t>(f, off_of(good, plan->outputs()->data()), 2);
  expect_format_error([&] { decode_all(f); }, "out of range");
}

TEST(PteMalformed, TensorWithNegativeOrOverflowingSizes) {
  const File good = small_file();
  const auto* t = fb::GetProgram(good.data())->execution_plan()->Get(0)->values()->Get(0)->val_as_Tensor();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->sizes()->size(), 4u);
  const size_t sizes_at = off_of(good, t->sizes()->data());
  File f = good;
  put<int32_t>(f, sizes_at + 4, -3);
  expect_format_error([&] { decode_all(f); }, "negative size -3");
  f = good;
  for (int k = 0; k < 4; ++k) put<int32_t>(f, sizes_at + 4 * k, std::numeric_limits<int32_t>::max());
  expect_format_error([&] { decode_all(f); }, "overflow");
  f = good;
  put<int32_t>(f, sizes_at + 12, 1 << 20);  // fits in i64 but not in the planned arena
  expect_format_error([&] { decode_all(f); }, "beyond the arena size");
}

// memory_id indexes non_const_buffer_sizes, whose entry 0 is reserved: the last valid id is
// size - 1, and an id equal to the size (one past the last arena) must be refused, not read.
TEST(PteMalformed, MemoryIdOnePastTheLastArenaIsAFormatErrorNamingIt) {
  const File good = small_file();
  const auto* plan = fb::GetProgram(good.data())->execution_plan()->Get(0);
  const uint32_t arenas = plan->non_const_buffer_sizes()->size();
  ASSERT_GE(arenas, 2u);
  const fb::AllocationDetails* alloc = nullptr;
  for (const auto* v : *plan->values())
    if (const auto* t = v->val_as_Tensor(); t && t->allocation_info()) {
      alloc = t->allocation_info();
      break;
    }
  ASSERT_NE(alloc, nullptr);
  const size_t at = field_at(good, alloc, fb::AllocationDetails::VT_MEMORY_ID);
  File f = good;
  put<uint32_t>(f, at, arenas - 1);  // the last arena: accepted
  decode_all(f);
  put<uint32_t>(f, at, arenas);
  expect_format_error([&] { decode_all(f); }, "memory_id " + std::to_string(arenas) + " out of range");
  put<uint32_t>(f, at, 0);  // the reserved entry
  expect_format_error([&] { decode_all(f); }, "memory_id 0 out of range");
}

TEST(VkGraphMalformed, HeaderFieldsAreCheckedAndNamed) {
  const File good = small_file();
  const Program prog = read_program(std::make_shared<Bytes>(good));
  const ByteSpan blob = prog.plans[0].delegates[0].blob;
  const File b0(blob.begin(), blob.end());
  auto vk = [&](const File& b) { read_vkgraph(b, prog); };
  File b = b0;
  expect_format_error([&] { vk(File(b0.begin(), b0.begin() + 29)); }, "smaller than the 30-byte header");
  std::memcpy(b.data() + 4, "VH01", 4);
  expect_format_error([&] { vk(b); }, "'VH00'");
  b = b0;
  put<uint16_t>(b, 8, 29);
  expect_format_error([&] { vk(b); }, "header_size 29");
  b = b0;
  put<uint32_t>(b, 10, 20);
  expect_format_error([&] { vk(b); }, "inside the header");
  b = b0;
  put<uint32_t>(b, 14, 0);
  expect_format_error([&] { vk(b); }, "flatbuffer_size is 0");
  b = b0;
  put<uint32_t>(b, 10, 40);
  put<uint32_t>(b, 14, 900);
  expect_format_error([&] { vk(File(b.begin(), b.begin() + 512)); },
                      "VH00 header: flatbuffer_offset 40 + size 900 exceeds blob size 512");
  b = b0;
  put<uint32_t>(b, 14, 0xFFFFFFF0u);  // offset + size beyond 32 bits
  expect_format_error([&] { vk(b); }, "exceeds blob size");
  b = b0;
  put<uint32_t>(b, 18, 40);
  expect_format_error([&] { vk(b); }, "overlaps the flatbuffer");
  b = b0;
  put<uint64_t>(b, 22, 1);
  expect_format_error([&] { vk(b); }, "bytes_size 1 exceeds blob size");
  b = b0;
  put<uint64_t>(b, 22, std::numeric_limits<uint64_t>::max());
  expect_format_error([&] { vk(b); }, "exceeds blob size");
  b = b0;
  std::memcpy(b.data() + 36, "VK01", 4);
  expect_format_error([&] { vk(b); }, "'VK00'");
  b = b0;
  put<uint32_t>(b, 14, get<uint32_t>(b0, 14) - 9);  // flatbuffer cut short
  expect_format_error([&] { vk(b); }, "failed verification");
}

TEST(VkGraphMalformed, ValueIdsOutOfRange) {
  const File good = small_file();
  const auto* g = graph_of(good);
  const int32_t n = static_cast<int32_t>(g->values()->size());
  File f = good;
  put<int32_t>(f, off_of(good, g->chain()->Get(0)->args()->data()), n);
  expect_format_error([&] { decode_all(f); }, "op 0 (aten.add.Tensor) arg: value id " + std::to_string(n));
  f = good;
  put<int32_t>(f, off_of(good, g->chain()->Get(1)->args()->data()) + 4, -1);
  expect_format_error([&] { decode_all(f); }, "value id -1 out of range");
  f = good;
  put<uint32_t>(f, off_of(good, g->input_ids()->data()), 77);
  expect_format_error([&] { decode_all(f); }, "input_ids entry: value id 77");
  f = good;
  put<uint32_t>(f, off_of(good, g->output_ids()->data()), 0xFFFFFFFFu);
  expect_format_error([&] { decode_all(f); }, "output_ids entry");
  // ValueList item.
  const vkgraph::ValueList* vl = nullptr;
  for (const auto* v : *g->values())
    if (v->value_type() == vkgraph::GraphTypes::ValueList) vl = v->value_as_ValueList();
  ASSERT_NE(vl, nullptr);
  f = good;
  put<int32_t>(f, off_of(good, vl->items()->data()), 500);
  expect_format_error([&] { decode_all(f); }, "ValueList");
  // constant_id (the second constant's id is stored; the first one's is omitted as default 0).
  const vkgraph::VkTensor* c1 = nullptr;
  for (const auto* v : *g->values())
    if (v->value_type() == vkgraph::GraphTypes::VkTensor && v->value_as_VkTensor()->constant_id() == 1)
      c1 = v->value_as_VkTensor();
  ASSERT_NE(c1, nullptr);
  f = good;
  put<int32_t>(f, field_at(good, c1, vkgraph::VkTensor::VT_CONSTANT_ID), 9);
  expect_format_error([&] { decode_all(f); }, "constant_id 9 out of range");
}

TEST(VkGraphMalformed, TensorDimsNegativeOrOverflowingByteSize) {
  const File good = small_file();
  const auto* t = graph_of(good)->values()->Get(0)->value_as_VkTensor();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->dims()->size(), 4u);
  File f = good;
  for (int k = 0; k < 4; ++k) put<uint32_t>(f, off_of(good, t->dims()->data()) + 4 * k, 0x7FFFFFFFu);
  expect_format_error([&] { decode_all(f); }, "overflow the byte size");
  // dims are u32 on disk: -1 appears as 0xFFFFFFFF and is reported as negative.
  f = good;
  put<uint32_t>(f, off_of(good, t->dims()->data()) + 8, 0xFFFFFFFFu);
  expect_format_error([&] { decode_all(f); }, "tensor dim 2 is negative (-1 as i32)");
}

TEST(VkGraphMalformed, ConstantTensorLargerThanItsBytesIsRejected) {
  const File good = small_file();
  const auto* g = graph_of(good);
  const vkgraph::VkTensor* c0 = nullptr;
  for (const auto* v : *g->values())
    if (v->value_type() == vkgraph::GraphTypes::VkTensor && v->value_as_VkTensor()->constant_id() == 0)
      c0 = v->value_as_VkTensor();
  ASSERT_NE(c0, nullptr);
  File f = good;
  put<uint32_t>(f, off_of(good, c0->dims()->data()), 2);  // [1,3,1,5] -> [2,3,1,5]
  expect_format_error([&] { decode_all(f); }, "constant tensor needs 120 bytes but constant 0 holds 60");
}

TEST(VkGraphMalformed, MissingNamedConstantNamesTheKey) {
  const File good = small_file();
  const auto* nd = fb::GetProgram(good.data())->named_data();
  ASSERT_EQ(nd->size(), 2u);
  const std::string key = nd->Get(0)->key()->str();
  File f = good;
  f[off_of(good, nd->Get(0)->key()->data())] ^= 0x01;  // rename the program's entry
  const Program prog = read_program(std::make_shared<Bytes>(f));  // the program itself is fine
  expect_format_error([&] { read_vkgraph(prog.plans[0].delegates[0].blob, prog); },
                      "named constant '" + key + "' not found");
}

TEST(VkGraphMalformed, InlineConstantOutOfRange) {
  GraphBuilder::Options opt;
  opt.constants = GraphBuilder::ConstantPlacement::InlineBlob;
  const File good = small_file(opt);
  ASSERT_NO_THROW(decode_all(good));
  const auto* c = graph_of(good)->constants()->Get(1);
  File f = good;
  put<uint64_t>(f, field_at(good, c, vkgraph::VkBytes::VT_LENGTH), 4096);
  expect_format_error([&] { decode_all(f); }, "exceeds the constant region");
  f = good;
  put<uint64_t>(f, field_at(good, c, vkgraph::VkBytes::VT_OFFSET),
                std::numeric_limits<uint64_t>::max() - 1);  // offset + length wraps
  expect_format_error([&] { decode_all(f); }, "exceeds the constant region");
}

namespace {
// Flips 1-4 random bytes `n` times; every outcome must be success or etwebgpu::Error.
void mutate_many(const File& base, uint32_t seed, int n, size_t lo, size_t hi, int* errors) {
  std::mt19937 rng(seed);
  for (int i = 0; i < n; ++i) {
    File f = base;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) f[lo + rng() % (hi - lo)] ^= static_cast<uint8_t>(1 + rng() % 255);
    try {
      decode_all(f);
    } catch (const etwebgpu::Error&) {
      ++*errors;
    } catch (const std::exception& e) {
      FAIL() << "mutation " << i << " (seed " << seed << ") threw a non-etwebgpu exception: " << e.what();
    }
  }
}
}  // namespace

TEST(PteFuzz, DeterministicByteFlipsNeverCrash) {
  GraphBuilder::Options inl;
  inl.delegate_in_segment = false;
  inl.constants = GraphBuilder::ConstantPlacement::InlineBlob;
  int errors = 0;
  for (const File& f : {small_file(), small_file(inl)}) {
    const uint64_t program_size = get<uint64_t>(f, 16);
    mutate_many(f, 1, 1500, 0, f.size(), &errors);                  // anywhere
    mutate_many(f, 2, 1500, 0, program_size, &errors);              // the Program flatbuffer
    const size_t b = blob_offset(f);
    mutate_many(f, 3, 1500, b, b + get<uint32_t>(f, b + 14) + 32, &errors);  // VH00 + VkGraph
  }
  EXPECT_GT(errors, 1000);  // most mutations are caught, none crash
}

TEST(PteFuzz, ByteFlipsOnARealExportNeverCrash) {
  using namespace etwebgpu::format::fixtures;
  ETWEBGPU_REQUIRE_CONFORMANCE();
  int errors = 0;
  for (const char* name : {"sdpa_standard", "linear_bias"}) {
    const auto bytes = load_case(name);
    const File f(bytes->begin(), bytes->end());
    ASSERT_NO_THROW(decode_all(f)) << name;
    mutate_many(f, 11, 1000, 0, get<uint64_t>(f, 16), &errors);
    mutate_many(f, 12, 1000, get<uint64_t>(f, 24), f.size(), &errors);
  }
  EXPECT_GT(errors, 0);
}
