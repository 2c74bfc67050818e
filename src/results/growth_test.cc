#include "results/growth.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace kfpbench::results {
namespace {

// y = c * x^k at the levels a growth scenario would use.
std::vector<std::pair<double, double>> Curve(double c, double k, double noise = 0,
                                             uint64_t seed = 1) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> jitter(0, noise);
  std::vector<std::pair<double, double>> out;
  for (double x : {1000.0, 5000.0, 10000.0, 50000.0, 100000.0, 200000.0}) {
    out.emplace_back(x, c * std::pow(x, k) * std::exp(noise > 0 ? jitter(gen) : 0.0));
  }
  return out;
}

TEST(FitPowerLaw, RecoversKnownExponentsOfExactCurves) {
  for (double k : {0.0, 0.3, 1.0, 2.0}) {
    auto fit = FitPowerLaw(Curve(250, k));
    ASSERT_TRUE(fit.has_value());
    EXPECT_NEAR(fit->exponent, k, 1e-9) << k;
    EXPECT_NEAR(fit->At(1e6), 250 * std::pow(1e6, k), 250 * std::pow(1e6, k) * 1e-6);
    EXPECT_NEAR(fit->r_squared, 1.0, 1e-9);
    ASSERT_TRUE(fit->exponent_low && fit->exponent_high);
    EXPECT_NEAR(*fit->exponent_low, k, 1e-6);
    EXPECT_NEAR(*fit->exponent_high, k, 1e-6);
  }
}

TEST(FitPowerLaw, IntervalHoldsTheTrueExponentOfNoisyCurves) {
  // 10% multiplicative noise: the 95% interval holds the true exponent in
  // (about) 95 of 100 seeded curves, and is never degenerate.
  int held = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    auto fit = FitPowerLaw(Curve(1000, 0.5, 0.1, seed));
    ASSERT_TRUE(fit && fit->exponent_low && fit->exponent_high);
    EXPECT_LT(*fit->exponent_low, *fit->exponent_high);
    if (*fit->exponent_low <= 0.5 && 0.5 <= *fit->exponent_high) ++held;
  }
  EXPECT_GE(held, 88);
  EXPECT_LE(held, 100);
}

TEST(FitPowerLaw, VerdictsFollowTheExponentBands) {
  EXPECT_EQ(FitPowerLaw(Curve(500, 0.0))->verdict, "constant");
  EXPECT_EQ(FitPowerLaw(Curve(500, 0.3))->verdict, "logarithmic");
  EXPECT_EQ(FitPowerLaw(Curve(500, 1.0))->verdict, "linear");
  EXPECT_EQ(FitPowerLaw(Curve(500, 2.0))->verdict, "worse");
  // A logarithmic curve from 1k to 200k fits with a small exponent.
  std::vector<std::pair<double, double>> log_curve;
  for (double x : {1000.0, 10000.0, 100000.0, 200000.0})
    log_curve.emplace_back(x, 40 * std::log(x));
  auto fit = FitPowerLaw(log_curve);
  ASSERT_TRUE(fit);
  EXPECT_GT(fit->exponent, 0.05);
  EXPECT_LT(fit->exponent, 0.2);
}

TEST(FitPowerLaw, TwoPointsFitWithoutAnInterval) {
  auto fit = FitPowerLaw({{100, 10}, {1000, 100}});
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->exponent, 1.0, 1e-12);
  EXPECT_FALSE(fit->exponent_low.has_value());
}

TEST(FitPowerLaw, RefusesWhatCannotBeFitted) {
  EXPECT_FALSE(FitPowerLaw({}));
  EXPECT_FALSE(FitPowerLaw({{100, 10}}));
  EXPECT_FALSE(FitPowerLaw({{100, 10}, {100, 20}, {100, 30}}));  // one x only
  EXPECT_FALSE(FitPowerLaw({{0, 10}, {100, 0}, {-5, 3}}));       // no usable point
}

TEST(GrowthCurve, FitsEachOperationAndExtrapolatesItsP99) {
  GrowthCurve curve;
  curve.extrapolate_to = 1000000;
  for (int64_t runs : {1000, 10000, 100000}) {
    GrowthLevel level;
    level.target_runs = runs;
    level.runs_stored = runs;
    // ListRuns linear in runs (1 us per run), GetRun flat at 2 ms.
    for (int i = 0; i < 100; ++i) {
      level.latency_us["ListRuns"].Record(runs);
      level.latency_us["GetRun"].Record(2000);
    }
    curve.levels.push_back(level);
  }
  auto fits = curve.Fits();
  ASSERT_TRUE(fits.contains("ListRuns"));
  ASSERT_TRUE(fits.contains("GetRun"));
  EXPECT_FALSE(fits.contains("CreateRun"));  // never measured
  // Histogram buckets are within 0.78%: the exponents are within about that.
  EXPECT_NEAR(fits["ListRuns"].p99->exponent, 1.0, 0.01);
  EXPECT_EQ(fits["ListRuns"].p99->verdict, "linear");
  EXPECT_NEAR(fits["GetRun"].p50->exponent, 0.0, 0.01);
  EXPECT_EQ(fits["GetRun"].p50->verdict, "constant");
  ASSERT_TRUE(fits["ListRuns"].p99_at_extrapolation);
  EXPECT_NEAR(*fits["ListRuns"].p99_at_extrapolation, 1e6, 1e6 * 0.05);
  ASSERT_TRUE(fits["ListRuns"].p99_at_extrapolation_low);
  EXPECT_LE(*fits["ListRuns"].p99_at_extrapolation_low,
            *fits["ListRuns"].p99_at_extrapolation_high);
}

TEST(GrowthLevel, FillRateCountsEveryObjectCreated) {
  GrowthLevel level;
  EXPECT_EQ(level.FillRatePerSecond(), 0);
  level.runs_created = 90;
  level.experiments_created = 8;
  level.pipelines_created = 1;
  level.versions_created = 1;
  level.fill_seconds = 4;
  EXPECT_DOUBLE_EQ(level.FillRatePerSecond(), 25);
}

}  // namespace
}  // namespace kfpbench::results
