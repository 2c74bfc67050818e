#include "results/stats.h"

#include <gtest/gtest.h>

namespace kfpbench::results {
namespace {

TEST(MannWhitney, MatchesTheNormalApproximationWithContinuityCorrection) {
  // scipy.stats.mannwhitneyu([1,2,3], [4,5,6], method="asymptotic") -> U=0, p=0.0809
  auto r = MannWhitneyU({1, 2, 3}, {4, 5, 6});
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_NEAR(r.p, 0.0809, 0.0005);
  EXPECT_LT(r.z, 0);
  auto flipped = MannWhitneyU({4, 5, 6}, {1, 2, 3});
  EXPECT_DOUBLE_EQ(flipped.u, 9);
  EXPECT_NEAR(flipped.p, r.p, 1e-12);
}

TEST(MannWhitney, CorrectsForTies) {
  // Ranks 1, 3, 3, 6 for the first sample: U = 13 - 10 = 3. Tie correction:
  // var = 16/12 * (9 - (24 + 24) / 56) = 10.857; z = (|3 - 8| - 0.5) / 3.295.
  auto r = MannWhitneyU({1, 2, 2, 3}, {2, 3, 3, 4});
  EXPECT_DOUBLE_EQ(r.u, 3);
  EXPECT_NEAR(r.z, -1.3657, 0.0005);
  EXPECT_NEAR(r.p, 0.1720, 0.0005);
  EXPECT_DOUBLE_EQ(MannWhitneyU({5, 5}, {5, 5, 5}).p, 1);  // all tied: no evidence
  EXPECT_DOUBLE_EQ(MannWhitneyU({}, {1, 2}).p, 1);
}

TEST(Statistics, Mean) {
  EXPECT_DOUBLE_EQ(Mean({1, 2, 3, 6}), 3);
  EXPECT_DOUBLE_EQ(Mean({}), 0);
}

TEST(Bootstrap, IsSeededAndCoversTheTrueChange) {
  std::vector<double> a, b;
  for (int i = 0; i < 50; ++i) {
    a.push_back(100 + i % 10);
    b.push_back(120 + i % 10);
  }
  auto mean = [](const std::vector<double>& v) { return Mean(v); };
  auto one = BootstrapRelativeChange(a, b, mean, 0.95, 500, 42);
  auto two = BootstrapRelativeChange(a, b, mean, 0.95, 500, 42);
  EXPECT_EQ(one.low, two.low);
  EXPECT_EQ(one.high, two.high);
  double truth = 124.5 / 104.5 - 1;
  EXPECT_LT(one.low, truth);
  EXPECT_GT(one.high, truth);
  EXPECT_GT(one.low, 0.15);
}

}  // namespace
}  // namespace kfpbench::results
