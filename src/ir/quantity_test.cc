// The one quantity parser (was two: exec's for step flags and ir's for the
// IR; their tests are merged here).
#include "ir/quantity.h"

#include "ir/pipeline_spec.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::ir {
namespace {

using ::testing::HasSubstr;

TEST(QuantityMemoryTest, AcceptsKubernetesQuantities) {
  EXPECT_EQ(*ParseQuantityMemory("0"), 0);
  EXPECT_EQ(*ParseQuantityMemory("100"), 100);
  EXPECT_EQ(*ParseQuantityMemory("1Ki"), 1024);
  EXPECT_EQ(*ParseQuantityMemory("256Mi"), 256LL << 20);
  EXPECT_EQ(*ParseQuantityMemory("1Gi"), 1LL << 30);
  EXPECT_EQ(*ParseQuantityMemory("1.5Gi"), 3LL << 29);
  EXPECT_EQ(*ParseQuantityMemory("2Ti"), 2LL << 40);
  EXPECT_EQ(*ParseQuantityMemory("1k"), 1000);
  EXPECT_EQ(*ParseQuantityMemory("1K"), 1000);
  EXPECT_EQ(*ParseQuantityMemory("2M"), 2000000);
  EXPECT_EQ(*ParseQuantityMemory("3G"), 3000000000);
  EXPECT_EQ(*ParseQuantityMemory("1E"), 1000000000000000000);
  // Kubernetes' decimal exponent form.
  EXPECT_EQ(*ParseQuantityMemory("1e3"), 1000);
  EXPECT_EQ(*ParseQuantityMemory("129e6"), 129000000);
  EXPECT_EQ(*ParseQuantityMemory("1.5e+3"), 1500);
  // Fractional bytes round up, as Kubernetes does.
  EXPECT_EQ(*ParseQuantityMemory("1.5"), 2);
  EXPECT_EQ(*ParseQuantityMemory(".5Ki"), 512);
}

TEST(QuantityMemoryTest, RejectsBadQuantitiesQuotingThem) {
  for (const char* bad : {"",        "Mi",    "-1",   "-1Mi",          "1X",  "1mi",  "1Zi", "abc",
                          "1.2.3Mi", " 1Mi",  "1Mi ", "99999999999Ei", ".Mi", "0x10", "inf", "nan",
                          "1e",      "1e3Mi", "+1",   "1e3.5"}) {
    auto r = ParseQuantityMemory(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.error().message, HasSubstr(fmt::format("'{}'", bad)));
    EXPECT_EQ(r.error().code, 400);
  }
}

TEST(QuantityCpuTest, AcceptsCoresAndMillicores) {
  EXPECT_DOUBLE_EQ(*ParseQuantityCpu("0.5"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseQuantityCpu("2"), 2);
  EXPECT_DOUBLE_EQ(*ParseQuantityCpu("1.5"), 1.5);
  EXPECT_DOUBLE_EQ(*ParseQuantityCpu("500m"), 0.5);
  for (const char* bad : {"", "-1", "1c", "m", "abc", "1.5.1"}) {
    EXPECT_FALSE(ParseQuantityCpu(bad).ok()) << bad;
  }
}

// A node of "1e300" CPU once became "largest: 0 CPU" (its millicores wrapped).
TEST(QuantityCpuTest, WhatCannotBeWholeMillicoresIsRefused) {
  EXPECT_DOUBLE_EQ(*ParseQuantityCpu("9e15"), 9e15);
  for (const char* huge : {"1e300", "1e16", "10E", "9300P"}) {
    auto r = ParseQuantityCpu(huge);
    ASSERT_FALSE(r.ok()) << huge;
    EXPECT_EQ(r.error().message, fmt::format("invalid CPU quantity '{}': too large", huge));
  }
}

TEST(FormatQuantityBytesTest, UsesTheLargestWholeBinaryUnit) {
  EXPECT_EQ(FormatQuantityBytes(0), "0");
  EXPECT_EQ(FormatQuantityBytes(1000), "1000");
  EXPECT_EQ(FormatQuantityBytes(1024), "1Ki");
  EXPECT_EQ(FormatQuantityBytes(256LL << 20), "256Mi");
  EXPECT_EQ(FormatQuantityBytes(3LL << 29), "1536Mi");
  EXPECT_EQ(FormatQuantityBytes(1LL << 30), "1Gi");
}

TEST(FormatBytesRoundedTest, ThreeDigitsInTheLargestUnitAboveOne) {
  EXPECT_EQ(FormatBytesRounded(0), "0");
  EXPECT_EQ(FormatBytesRounded(512), "512");
  EXPECT_EQ(FormatBytesRounded(200.0 * (1 << 20)), "200Mi");
  EXPECT_EQ(FormatBytesRounded(1500.0 * 2 * (1 << 30)), "2.93Ti");
  EXPECT_EQ(FormatBytesRounded(1536), "1.5Ki");
}

TEST(Quantity, ParsesCpuAndMemory) {
  EXPECT_DOUBLE_EQ(*ParseQuantityCpu("500m"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseQuantityCpu("2"), 2.0);
  EXPECT_DOUBLE_EQ(*ParseQuantityCpu("1.5"), 1.5);
  EXPECT_EQ(*ParseQuantityMemory("1Gi"), int64_t{1} << 30);
  EXPECT_EQ(*ParseQuantityMemory("2G"), 2000000000);
  EXPECT_EQ(*ParseQuantityMemory("128Mi"), 128 << 20);
  EXPECT_EQ(*ParseQuantityMemory("1.5Ki"), 1536);
  EXPECT_EQ(*ParseQuantityMemory("129e6"), 129000000);
  EXPECT_EQ(*ParseQuantityMemory("100"), 100);
  EXPECT_FALSE(ParseQuantityCpu("").ok());
  EXPECT_FALSE(ParseQuantityCpu("-1").ok());
  EXPECT_FALSE(ParseQuantityMemory("1Zi").ok());
  EXPECT_FALSE(ParseQuantityMemory("abc").ok());
  EXPECT_EQ(*ParseProtoDuration("3600s"), std::chrono::seconds(3600));
  EXPECT_EQ(*ParseProtoDuration("0.5s"), std::chrono::milliseconds(500));
  EXPECT_FALSE(ParseProtoDuration("5m").ok());
}

}  // namespace
}  // namespace kfpbench::ir
