#include "results/blocks.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace kfpbench::results {
namespace {

TEST(BlockedLogRatioTest, IsTheOneSampleTTestOfTheLogRatios) {
  // Log ratios 0.85, 0.18, 0.18 (the 1.5x slowdown over repetitions
  // scaled 0.8, 1, 1.25 on one side and 1.25, 0.8, 1 on the other): with 2
  // degrees of freedom the two-sided p is 1 - |t| / sqrt(t^2 + 2), exactly.
  std::vector<double> base = {1, 1, 1};
  std::vector<double> cand = {std::exp(0.85), std::exp(0.18), std::exp(0.18)};
  auto r = BlockedLogRatioTest(base, cand, 0.95);
  double mean = (0.85 + 0.18 + 0.18) / 3;
  double sd = std::sqrt(((0.85 - mean) * (0.85 - mean) + 2 * (0.18 - mean) * (0.18 - mean)) / 2);
  double t = mean / (sd / std::sqrt(3.0));
  EXPECT_NEAR(r.p, 1 - t / std::sqrt(t * t + 2), 1e-9);
  EXPECT_NEAR(r.change, std::expm1(mean), 1e-12);
  EXPECT_NEAR(r.spread, sd, 1e-12);
  EXPECT_EQ(r.blocks, 3u);
  // t(2)'s 97.5% quantile is 4.3027.
  EXPECT_NEAR(r.interval.low, std::expm1(mean - 4.3027 * sd / std::sqrt(3.0)), 1e-3);
  EXPECT_NEAR(r.interval.high, std::expm1(mean + 4.3027 * sd / std::sqrt(3.0)), 1e-3);
  EXPECT_GT(r.p, 0.05);
  // Three blocks this far apart cannot show a doubling.
  EXPECT_GT(BlockedDetectableChange(r.spread, r.blocks, 0.05), 1.0);
}

TEST(BlockedLogRatioTest, BlocksThatShareTheirDifferencesShowASmallChange) {
  // Repetitions 0.8, 1, 1.25 on both sides, the candidate 3% slower in each
  // (within 0.5%): the blocks cancel what the repetitions differ by.
  std::vector<double> base = {720, 900, 1125}, cand = {742, 925, 1162};
  auto r = BlockedLogRatioTest(base, cand, 0.95);
  EXPECT_LT(r.p, 0.01);
  EXPECT_NEAR(r.change, 0.03, 0.005);
  EXPECT_LT(BlockedDetectableChange(r.spread, r.blocks, 0.05), 0.05);
  EXPECT_LT(r.interval.low, r.change);
  EXPECT_GT(r.interval.high, r.change);
}

TEST(BlockedLogRatioTest, ItsStatedPowerIsThePowerItHas) {
  // 3 blocks whose log ratios spread by sigma around the change stated as
  // detectable at that spread: the test finds it 4 times in 5.
  const double sigma = 0.05;
  double stated = BlockedDetectableChange(sigma, 3, 0.05);
  ASSERT_TRUE(std::isfinite(stated));
  std::mt19937_64 rng(7);
  std::normal_distribution<double> ratio(std::log1p(stated), sigma);
  int found = 0, trials = 20000;
  for (int i = 0; i < trials; ++i) {
    std::vector<double> cand = {std::exp(ratio(rng)), std::exp(ratio(rng)), std::exp(ratio(rng))};
    if (BlockedLogRatioTest({1, 1, 1}, cand, 0.95).p < 0.05) ++found;
  }
  EXPECT_NEAR(static_cast<double>(found) / trials, 0.8, 0.02);
  // More blocks detect less; fewer than 2 detect nothing.
  EXPECT_LT(BlockedDetectableChange(sigma, 10, 0.05), stated);
  EXPECT_TRUE(std::isinf(BlockedDetectableChange(sigma, 1, 0.05)));
  EXPECT_DOUBLE_EQ(BlockedDetectableChange(0, 3, 0.05), 0);
}

TEST(BlockedLogRatioTest, NeedsTwoBlocksAValueAboveZeroAndAsManyOnEachSide) {
  EXPECT_DOUBLE_EQ(BlockedLogRatioTest({1}, {2}, 0.95).p, 1);
  EXPECT_EQ(BlockedLogRatioTest({1}, {2}, 0.95).blocks, 0u);
  EXPECT_DOUBLE_EQ(BlockedLogRatioTest({1, 2}, {2}, 0.95).p, 1);
  EXPECT_DOUBLE_EQ(BlockedLogRatioTest({1, 0}, {2, 2}, 0.95).p, 1);
  auto exact = BlockedLogRatioTest({1, 2}, {1.5, 3}, 0.95);  // both exactly 1.5x
  EXPECT_DOUBLE_EQ(exact.p, 0);
  EXPECT_NEAR(exact.change, 0.5, 1e-12);
}

// Unpaired sides (different numbers of repetitions): Welch's t on the logs.
// Logs {0, .1, .2} against {.5, .6, .7, .8}: difference .55, standard error
// sqrt(.01/3 + .01667/4) = .0866, t = 6.35 on 4.96 degrees of freedom.
TEST(WelchLogRatioTest, IsWelchsTTestOfTheLogs) {
  auto r = WelchLogRatioTest({1, std::exp(0.1), std::exp(0.2)},
                             {std::exp(0.5), std::exp(0.6), std::exp(0.7), std::exp(0.8)}, 0.95);
  EXPECT_NEAR(r.change, std::expm1(0.55), 1e-9);
  EXPECT_NEAR(r.error, 0.0866, 1e-4);
  EXPECT_NEAR(r.df, 4.96, 0.01);
  EXPECT_LT(r.p, 0.01);
  EXPECT_GT(r.p, 0.0005);
  EXPECT_LT(r.interval.low, r.change);
  EXPECT_GT(r.interval.high, r.change);
  EXPECT_GT(r.interval.low, 0);
  double detects = DetectableLogShift(r.error, r.df, 0.05);
  EXPECT_GT(detects, std::expm1(2.8 * r.error));  // wider than the normal's, on few values
  EXPECT_TRUE(std::isfinite(detects));
  EXPECT_DOUBLE_EQ(WelchLogRatioTest({1}, {2, 3}, 0.95).p, 1);
  EXPECT_DOUBLE_EQ(WelchLogRatioTest({1, 2}, {0, 3}, 0.95).df, 0);
  EXPECT_TRUE(std::isinf(DetectableLogShift(0.1, 0, 0.05)));
}

}  // namespace
}  // namespace kfpbench::results
