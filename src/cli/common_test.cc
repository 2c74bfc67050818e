#include "cli/common.h"

#include <gtest/gtest.h>

#include <limits>

namespace kfpbench::cli {
namespace {

constexpr double kNoLimit = std::numeric_limits<double>::infinity();

TEST(ParsePercent, TakesPercentagesAndShares) {
  EXPECT_DOUBLE_EQ(*ParsePercent("5%"), 0.05);
  EXPECT_DOUBLE_EQ(*ParsePercent("0.05"), 0.05);
  EXPECT_DOUBLE_EQ(*ParsePercent("0"), 0);
  EXPECT_DOUBLE_EQ(*ParsePercent("100%"), 1);
  EXPECT_DOUBLE_EQ(*ParsePercent("1"), 1);
  EXPECT_DOUBLE_EQ(*ParsePercent("250%", kNoLimit), 2.5);  // a headroom may pass 100%
  EXPECT_DOUBLE_EQ(*ParsePercent("3", kNoLimit), 3);
}

TEST(ParsePercent, RefusesBadInputNamingIt) {
  for (const char* bad :
       {"", "%", "lots", "5%%", "5 %", "-1%", "-0.5", "nan", "nan%", "inf", "1e999", "5%x"}) {
    auto r = ParsePercent(bad, kNoLimit);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message, std::string("expected a percentage like 5% (got '") + bad + "')");
  }
  auto over = ParsePercent("101%");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message, "must be at most 100% (got '101%')");
  EXPECT_FALSE(ParsePercent("1.5").ok());
  EXPECT_EQ(ParsePercent("60%", 0.5).error().message, "must be at most 50% (got '60%')");
}

}  // namespace
}  // namespace kfpbench::cli
