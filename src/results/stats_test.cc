#include "results/stats.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include <gtest/gtest.h>

namespace kfpbench::results {
namespace {

TEST(Statistics, Mean) {
  EXPECT_DOUBLE_EQ(Mean({1, 2, 3, 6}), 3);
  EXPECT_DOUBLE_EQ(Mean({}), 0);
}

TEST(WeightedSample, AHistogramsValuesAreItsBucketsInOrder) {
  metrics::Histogram h;
  for (int64_t v : {3, 3, 7, 9, 9, 9, 120}) h.Record(v);  // exact below 256
  auto w = FromHistogram(h);
  EXPECT_EQ(w.Count(), 7u);
  EXPECT_EQ(w.values.size(), 4u);
  EXPECT_DOUBLE_EQ(PercentileOf(w, 50), 9);
  EXPECT_DOUBLE_EQ(MeanOf(w), h.mean());
  EXPECT_DOUBLE_EQ(MeanOf(FromValues({1, 2, 3, 6})), 3);
  auto both = Pooled({w, FromValues({1, 4, 8, 100, 200})});
  EXPECT_EQ(both.Count(), 12u);
  EXPECT_TRUE(std::is_sorted(both.values.begin(), both.values.end()));
}

// Issue 39: steps that sleep 300 ms x 3 gave runs of 900-901 ms, whose mean
// read 900 ms beside a p50 of 903 ms, the upper edge of the bucket
// [900, 903]. Placed inside their buckets by the exact mean, the p50 is 900.
TEST(WeightedSample, PercentilesAgreeWithTheExactMean) {
  metrics::Histogram h;
  for (int i = 0; i < 50; ++i) h.Record(900);
  for (int i = 0; i < 10; ++i) h.Record(901);
  h.Record(1000);
  ASSERT_EQ(h.ValueAtPercentile(50), 903);  // the bucket's upper edge
  auto w = FromHistogram(h);
  EXPECT_NEAR(MeanOf(w), h.mean(), 1e-6);
  EXPECT_GE(PercentileOf(w, 50), 900);
  EXPECT_LT(PercentileOf(w, 50), 901);
  EXPECT_LE(PercentileOf(w, 100), 1000);
  EXPECT_GE(w.values.front().first, 900);
}

TEST(KruskalWallis, TellsGroupsApartAndAlikeGroupsNot) {
  // scipy.stats.kruskal([1,2,3,4,5],[6,7,8,9,10],[11,12,13,14,15]): H = 12.5,
  // p = 0.00193 (chi-square, 2 df; Wilson-Hilferty is within 1e-4 here).
  EXPECT_NEAR(KruskalWallisP({FromValues({1, 2, 3, 4, 5}), FromValues({6, 7, 8, 9, 10}),
                              FromValues({11, 12, 13, 14, 15})}),
              0.00193, 0.0002);
  // Two groups: chi-square with 1 df, exactly.
  // scipy.stats.kruskal([1,2,3],[4,5,6]): H = 3.857, p = 0.0495.
  EXPECT_NEAR(KruskalWallisP({FromValues({1, 2, 3}), FromValues({4, 5, 6})}), 0.0495, 0.0005);
  EXPECT_GT(KruskalWallisP({FromValues({1, 4, 5, 8}), FromValues({2, 3, 6, 7})}), 0.5);
  EXPECT_DOUBLE_EQ(KruskalWallisP({FromValues({1, 2})}), 1);
}

TEST(DetectableShift, GrowsWithTheErrorAndIsZeroWithoutOne) {
  EXPECT_DOUBLE_EQ(DetectableShift(0, 0.05), 0);
  // (1.96 + 0.84) standard errors of the log change.
  EXPECT_NEAR(DetectableShift(0.01, 0.05), std::expm1(2.8016 * 0.01), 1e-4);
  EXPECT_GT(DetectableShift(0.02, 0.05), DetectableShift(0.01, 0.05));
  EXPECT_GT(DetectableShift(0.01, 0.01), DetectableShift(0.01, 0.05));
  EXPECT_TRUE(std::isinf(DetectableShift(std::nan(""), 0.05)));
}

TEST(Bootstrap, WeightedIntervalsAreSeededAndCoverTheTrueChange) {
  metrics::Histogram a, b;
  for (int i = 0; i < 5000; ++i) {
    a.Record(1000 + i % 100);
    b.Record(1200 + i % 100);
  }
  auto mean = [](const WeightedSample& w) { return MeanOf(w); };
  auto one = BootstrapChanges(FromHistogram(a), FromHistogram(b), {mean}, 0.95, 300, 7);
  auto two = BootstrapChanges(FromHistogram(a), FromHistogram(b), {mean}, 0.95, 300, 7);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].interval.low, two[0].interval.low);
  double truth = 1249.5 / 1049.5 - 1;
  EXPECT_NEAR(one[0].estimate, truth, 1e-9);  // the mean is exact
  EXPECT_LT(one[0].interval.low, truth + 0.005);
  EXPECT_GT(one[0].interval.high, truth - 0.005);
  EXPECT_GT(one[0].interval.low, 0.17);
  EXPECT_LT(one[0].p, 0.05);
  EXPECT_GT(one[0].log_spread, 0);
}

// Issue 39: runs of 900 ms against 1350 ms printed a mean change of +50.0%
// with the interval [+49.6%, +49.7%]: the estimate came from the exact mean,
// the interval from the bucket edges. Now both come from one sample.
TEST(Bootstrap, TheEstimateLiesInItsOwnInterval) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> jitter(0, 2);
  metrics::Histogram a, b;
  for (int i = 0; i < 60; ++i) {
    a.Record(static_cast<int64_t>(900 + std::abs(jitter(rng))));
    b.Record(static_cast<int64_t>(1350 + std::abs(jitter(rng))));
  }
  std::vector<std::function<double(const WeightedSample&)>> stats = {
      [](const WeightedSample& w) { return PercentileOf(w, 50); },
      [](const WeightedSample& w) { return PercentileOf(w, 95); },
      [](const WeightedSample& w) { return MeanOf(w); }};
  auto changes = BootstrapChanges(FromHistogram(a), FromHistogram(b), stats, 0.95, 2000, 1);
  for (const auto& c : changes) {
    EXPECT_LE(c.interval.low, c.estimate);
    EXPECT_GE(c.interval.high, c.estimate);
    EXPECT_NEAR(c.estimate, 0.5, 0.01);
  }
  EXPECT_NEAR(changes[2].estimate, b.mean() / a.mean() - 1, 1e-9);
}

// Issue 39: an interval that excluded 0 beside "no significant change". The
// p-value is the interval's: below 1 - confidence exactly when the interval
// excludes 0, over many samples on either side of that line.
TEST(Bootstrap, ItsPValueIsBelowAlphaExactlyWhenItsIntervalExcludesZero) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> latency(std::log(5000.0), 0.4);
  int significant = 0;
  for (int trial = 0; trial < 30; ++trial) {
    metrics::Histogram a, b;
    double shift = 1 + 0.004 * trial;  // from none to +12%
    for (int i = 0; i < 400; ++i) {
      a.Record(static_cast<int64_t>(latency(rng)));
      b.Record(static_cast<int64_t>(latency(rng) * shift));
    }
    auto changes = BootstrapChanges(FromHistogram(a), FromHistogram(b),
                                    {[](const WeightedSample& w) { return PercentileOf(w, 50); },
                                     [](const WeightedSample& w) { return PercentileOf(w, 99); }},
                                    0.95, 1000, trial);
    for (const auto& c : changes) {
      bool excludes = c.interval.low > 0 || c.interval.high < 0;
      EXPECT_EQ(excludes, c.p < 0.05)
          << trial << ": [" << c.interval.low << ", " << c.interval.high << "] p " << c.p;
      significant += excludes;
    }
  }
  EXPECT_GT(significant, 5);  // both sides of the line were seen
  EXPECT_LT(significant, 55);
}

}  // namespace
}  // namespace kfpbench::results
