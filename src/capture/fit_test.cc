#include "capture/fit.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "capture/derive.h"

namespace kfpbench::capture {
namespace {

TEST(Fit, RecoversALognormalAndItsDistanceIsSmall) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(std::log(60.0), 0.3);
  std::vector<double> samples;
  for (int i = 0; i < 4000; ++i) samples.push_back(dist(rng));
  LognormalFit fit = FitLognormal(samples);
  EXPECT_EQ(fit.n, 4000u);
  EXPECT_NEAR(fit.median, 60.0, 60.0 * 0.02);
  EXPECT_NEAR(fit.sigma, 0.3, 0.02);
  EXPECT_LT(fit.ks_d, 0.886 / std::sqrt(4000.0));
}

TEST(Fit, AUniformIsFarFromALognormalByKs) {
  std::vector<double> samples;
  for (int i = 1; i <= 1000; ++i) samples.push_back(i);  // uniform on 1..1000
  EXPECT_GT(FitLognormal(samples).ks_d, 0.1);
}

TEST(Fit, TooFewOrNonPositiveSamplesFitNothing) {
  EXPECT_EQ(FitLognormal({}).n, 0u);
  EXPECT_EQ(FitLognormal({0, -1, 3}).n, 0u);
  EXPECT_EQ(Quantiles({})["n"], 0);
}

TEST(Fit, QuantilesAreNearestRank) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  auto q = Quantiles(v);
  EXPECT_EQ(q["p50"], 50);
  EXPECT_EQ(q["p95"], 95);
  EXPECT_EQ(q["max"], 100);
}

TEST(RateByHourOfWeek, DividesArrivalsByTheHoursTheWindowCovered) {
  // Two Mondays (2026-11-16 and 2026-11-23) 09:00-10:00 UTC, six arrivals in all.
  const WallTime since = *ParseRfc3339("2026-11-16T00:00:00Z");
  const WallTime until = *ParseRfc3339("2026-11-30T00:00:00Z");
  std::vector<WallTime> arrivals;
  for (const char* t : {"2026-11-16T09:01:00Z", "2026-11-16T09:30:00Z", "2026-11-16T09:59:00Z",
                        "2026-11-23T09:10:00Z", "2026-11-23T09:20:00Z", "2026-11-23T09:40:00Z"}) {
    arrivals.push_back(*ParseRfc3339(t));
  }
  auto rates = RateByHourOfWeek(arrivals, since, until);
  ASSERT_EQ(rates.size(), 168u);
  EXPECT_DOUBLE_EQ(rates[9].get<double>(), 3.0);  // Monday 09:00: 6 runs over 2 hours
  EXPECT_DOUBLE_EQ(rates[10].get<double>(), 0.0);
  // A window shorter than a week leaves the hours it never saw null.
  auto short_window = RateByHourOfWeek(arrivals, since, *ParseRfc3339("2026-11-16T12:00:00Z"));
  EXPECT_TRUE(short_window[12].is_null());
  EXPECT_DOUBLE_EQ(short_window[9].get<double>(), 3.0);
}

TEST(FitTest, TwoSampleKsAgreesWithNumericalRecipesProbks) {
  std::vector<double> a, b;
  for (int i = 0; i < 40; ++i) a.push_back(i / 40.0);
  for (int i = 0; i < 50; ++i) b.push_back(0.1 + i / 50.0);
  // D = 0.125; Q_KS((sqrt(20) + 0.12 + 0.11 / sqrt(20)) D) = 0.8546.
  KsTwoSample same = TwoSampleKs(a, b);
  EXPECT_NEAR(same.d, 0.125, 1e-12);
  EXPECT_NEAR(same.p, 0.8546, 1e-4);
  for (double& x : b) x += 0.5;
  KsTwoSample apart = TwoSampleKs(a, b);
  EXPECT_GT(apart.d, 0.6);
  EXPECT_LT(apart.p, 1e-6);
  EXPECT_EQ(TwoSampleKs(a, a).d, 0.0);
  EXPECT_EQ(TwoSampleKs(a, a).p, 1.0);
}

}  // namespace
}  // namespace kfpbench::capture
