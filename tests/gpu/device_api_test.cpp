// include/etwebgpu/device.h: the public view of the shared device and its self-test (the same
// checks `etwebgpu info` prints and the browser build runs on the page's WebGPU).
#include <gtest/gtest.h>

#include <set>

#include "etwebgpu/device.h"
#include "gpu/context.h"
#include "support/op_harness.h"

using namespace etwebgpu;

namespace {

TEST(DeviceApi, InfoDescribesTheContextsAdapter) {
  ETW_REQUIRE_GPU();
  const DeviceInfo d = device_info();
  const gpu::DeviceInfo& i = gpu::Context::get()->info();
  EXPECT_EQ(d.summary, i.summary());
  EXPECT_EQ(d.description, i.description);
  EXPECT_EQ(d.max_buffer_size, i.max_buffer_size);
  EXPECT_EQ(d.timestamp_query, i.timestamp_query);
  EXPECT_TRUE((std::set<std::string>{"discrete", "integrated", "cpu", "unknown"}.count(d.adapter_type))) << d.adapter_type;
}

TEST(DeviceApi, SelfTestRunsEveryCheckAndAllPass) {
  ETW_REQUIRE_GPU();
  const auto checks = self_test();
  ASSERT_EQ(checks.size(), 6u);
  std::set<std::string> names;
  for (const auto& c : checks) {
    EXPECT_TRUE(c.pass) << c.name << ": " << c.message;
    EXPECT_FALSE(c.message.empty()) << c.name;
    names.insert(c.name);
  }
  EXPECT_EQ(names.size(), checks.size());
  // The refusals carry the device's own message.
  EXPECT_NE(checks[3].message.find("undefined_thing"), std::string::npos) << checks[3].message;
  EXPECT_NE(checks[5].message.find("size"), std::string::npos) << checks[5].message;
}

}  // namespace
