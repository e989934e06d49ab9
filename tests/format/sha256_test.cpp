#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "format/sha256.h"

using etwebgpu::format::sha256_hex;

namespace {
std::string hex_of(const std::string& s) {
  return sha256_hex(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}
}  // namespace

TEST(FormatSha256, MatchesFips180KnownVectors) {
  EXPECT_EQ(hex_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex_of(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(FormatSha256, PaddingBoundaryLengthsAreStable) {
  // 55/56/63/64 bytes straddle the one-vs-two padding block boundary.
  EXPECT_EQ(hex_of(std::string(55, 'x')).size(), 64u);
  EXPECT_NE(hex_of(std::string(55, 'x')), hex_of(std::string(56, 'x')));
  EXPECT_EQ(hex_of(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}
