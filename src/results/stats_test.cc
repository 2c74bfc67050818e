#include "results/stats.h"

#include <algorithm>
#include <cmath>

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

TEST(WeightedSample, AHistogramsTestIsTheTestOfItsValuesWrittenOut) {
  metrics::Histogram h;
  std::vector<double> written_out;
  for (int64_t v : {3, 3, 7, 9, 9, 9, 120}) {
    h.Record(v);
    written_out.push_back(static_cast<double>(v));
  }
  auto w = FromHistogram(h);
  EXPECT_EQ(w.Count(), 7u);
  EXPECT_EQ(w.values.size(), 4u);
  std::vector<double> other = {1, 4, 8, 100, 200};
  auto weighted = MannWhitneyU(w, FromValues(other));
  auto plain = MannWhitneyU(written_out, other);
  EXPECT_DOUBLE_EQ(weighted.u, plain.u);
  EXPECT_DOUBLE_EQ(weighted.p, plain.p);
  EXPECT_DOUBLE_EQ(PercentileOf(w, 50), 9);
  EXPECT_DOUBLE_EQ(MeanOf(FromValues({1, 2, 3, 6})), 3);
  auto both = Pooled({w, FromValues(other)});
  EXPECT_EQ(both.Count(), 12u);
  EXPECT_TRUE(std::is_sorted(both.values.begin(), both.values.end()));
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

TEST(DetectableChange, ThreeAgainstThreeCanDetectNothingAndMoreValuesDetectLess) {
  auto narrow = FromValues({98, 99, 100, 101, 102});
  EXPECT_TRUE(std::isinf(DetectableChange(narrow, 3, 3, 0.05)));
  // 5 against 5 separate at best to p = 0.012, short of 80% power at 0.05;
  // 8 against 8 find a slowdown a little past the spread (+4%).
  EXPECT_TRUE(std::isinf(DetectableChange(narrow, 5, 5, 0.05)));
  double eight = DetectableChange(narrow, 8, 8, 0.05);
  EXPECT_GT(eight, 0.03);
  EXPECT_LT(eight, 0.1);
  double hundred = DetectableChange(narrow, 100, 100, 0.05);
  EXPECT_LT(hundred, eight);
  // A wider spread needs a larger change at the same sizes.
  auto wide = FromValues({50, 75, 100, 150, 200});
  EXPECT_GT(DetectableChange(wide, 100, 100, 0.05), 2 * hundred);
  EXPECT_TRUE(std::isinf(DetectableChange({}, 10, 10, 0.05)));
}

TEST(Bootstrap, WeightedIntervalsAreSeededAndCoverTheTrueChange) {
  metrics::Histogram a, b;
  for (int i = 0; i < 5000; ++i) {
    a.Record(1000 + i % 100);
    b.Record(1200 + i % 100);
  }
  auto mean = [](const WeightedSample& w) { return MeanOf(w); };
  auto one = BootstrapRelativeChanges(FromHistogram(a), FromHistogram(b), {mean}, 0.95, 300, 7);
  auto two = BootstrapRelativeChanges(FromHistogram(a), FromHistogram(b), {mean}, 0.95, 300, 7);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].low, two[0].low);
  double truth = 1249.5 / 1049.5 - 1;
  EXPECT_LT(one[0].low, truth + 0.005);
  EXPECT_GT(one[0].high, truth - 0.005);
  EXPECT_GT(one[0].low, 0.17);
}

}  // namespace
}  // namespace kfpbench::results
