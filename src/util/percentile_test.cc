#include "util/percentile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kfpbench {
namespace {

TEST(NearestRank, IsTheCeilingOfShareTimesCount) {
  EXPECT_EQ(NearestRank(5, 0.5), 3u);  // 2.5 -> 3
  EXPECT_EQ(NearestRank(4, 0.5), 2u);  // exactly 2
  EXPECT_EQ(NearestRank(10, 0.91), 10u);
  EXPECT_EQ(NearestRank(100, 0.951), 96u);
  EXPECT_EQ(NearestRank(3, 1.0 / 3), 1u);
}

TEST(NearestRank, Edges) {
  EXPECT_EQ(NearestRank(0, 0.5), 0u);  // no values, no rank
  EXPECT_EQ(NearestRank(0, 0), 0u);
  EXPECT_EQ(NearestRank(1, 0), 1u);  // one value is every quantile
  EXPECT_EQ(NearestRank(1, 0.5), 1u);
  EXPECT_EQ(NearestRank(1, 1), 1u);
  EXPECT_EQ(NearestRank(20, 0), 1u);   // p0: the minimum
  EXPECT_EQ(NearestRank(20, 1), 20u);  // p100: the maximum
  EXPECT_EQ(NearestRank(20, 1e-300), 1u);
  EXPECT_EQ(NearestRank(20, std::nextafter(1.0, 0.0)), 20u);
}

TEST(NearestRank, SharesOutsideZeroToOneAreClamped) {
  EXPECT_EQ(NearestRank(20, -0.5), 1u);
  EXPECT_EQ(NearestRank(20, 1.5), 20u);
  EXPECT_EQ(NearestRank(20, -std::numeric_limits<double>::infinity()), 1u);
  EXPECT_EQ(NearestRank(20, std::numeric_limits<double>::infinity()), 20u);
  EXPECT_EQ(NearestRank(20, std::nan("")), 1u);
}

TEST(NearestRank, ProductsThatShouldBeIntegersAre) {
  // 0.07 x 100 is 7.000000000000001 in doubles: a plain ceil says 8.
  EXPECT_EQ(NearestRank(100, 0.07), 7u);
  EXPECT_EQ(NearestRank(200, 0.07), 14u);
  EXPECT_EQ(NearestRank(20, 0.95), 19u);
  EXPECT_EQ(NearestRank(100, 0.95), 95u);
  EXPECT_EQ(NearestRank(1000, 0.999), 999u);
  // The bootstrap's 95% interval tail, (1 - 0.95) / 2, is 0.025000000000000022.
  EXPECT_EQ(NearestRank(1000, (1 - 0.95) / 2), 25u);
  EXPECT_EQ(NearestRank(1000, 1 - (1 - 0.95) / 2), 975u);
  // Every share of whole percents over every count up to 1000.
  for (size_t n = 1; n <= 1000; ++n) {
    for (size_t percent = 1; percent <= 100; ++percent) {
      size_t exact = (percent * n + 99) / 100;  // ceil in integers
      ASSERT_EQ(NearestRank(n, static_cast<double>(percent) / 100), exact)
          << percent << "% of " << n;
    }
  }
  // Just above an integer for real still goes up.
  EXPECT_EQ(NearestRank(1000000, 0.000001001), 2u);
}

TEST(Percentile, PicksTheNearestRankOfUnsortedValues) {
  EXPECT_DOUBLE_EQ(Percentile({5, 1, 4, 2, 3}, 50), 3);
  EXPECT_DOUBLE_EQ(Percentile({5, 1, 4, 2, 3}, 100), 5);
  EXPECT_DOUBLE_EQ(Percentile({5, 1, 4, 2, 3}, 0), 1);
  EXPECT_DOUBLE_EQ(Percentile({5, 1, 4, 2, 3}, -10), 1);
  EXPECT_DOUBLE_EQ(Percentile({5, 1, 4, 2, 3}, 250), 5);
  EXPECT_DOUBLE_EQ(Percentile({7}, 95), 7);
  EXPECT_DOUBLE_EQ(Percentile({}, 50), 0);
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  EXPECT_DOUBLE_EQ(Percentile(hundred, 7), 7);
  EXPECT_DOUBLE_EQ(Percentile(hundred, 95), 95);
  EXPECT_DOUBLE_EQ(Percentile(hundred, 99.5), 100);
}

}  // namespace
}  // namespace kfpbench
