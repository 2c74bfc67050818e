#include "harness/arrivals.h"

#include <gtest/gtest.h>

namespace kfpbench::harness {
namespace {

TEST(ArrivalSchedule, ConstantGapsDoNotDrift) {
  WallTime t0 = WallTime(std::chrono::seconds(1000));
  ArrivalSchedule s(t0, 7, false, 1);  // 7 per minute: gaps of 8.571... s
  WallTime last{};
  for (int i = 0; i <= 7000; ++i) last = s.Next();
  EXPECT_NEAR(ToSeconds(last - t0), 60000.0, 1e-3);
}

TEST(ArrivalSchedule, OffsetShardsInterleaveIntoOneSchedule) {
  WallTime t0 = WallTime(std::chrono::seconds(1000));
  ArrivalSchedule one(t0, 120, false, 1);
  ArrivalSchedule a(t0, 60, false, 1, 0.0), b(t0, 60, false, 1, 0.5);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(one.Next(), a.Next());
    EXPECT_EQ(one.Next(), b.Next());
  }
}

TEST(ArrivalSchedule, PoissonHasTheRequestedMeanAndIsSeeded) {
  WallTime t0 = WallTime(std::chrono::seconds(1000));
  ArrivalSchedule a(t0, 600, true, 42), b(t0, 600, true, 42), c(t0, 600, true, 43);
  WallTime last{};
  const int n = 20000;
  double squares = 0;
  WallTime prev = a.Next();
  (void)b.Next();
  (void)c.Next();
  bool differs = false;
  for (int i = 1; i <= n; ++i) {
    last = a.Next();
    EXPECT_EQ(last, b.Next());
    differs |= last != c.Next();
    double gap = ToSeconds(last - prev);
    squares += gap * gap;
    prev = last;
  }
  double mean = ToSeconds(last - t0) / n;
  EXPECT_NEAR(mean, 0.1, 0.005);  // 600 per minute
  // Exponential gaps: variance equals mean squared (a constant schedule has none).
  double variance = squares / n - mean * mean;
  EXPECT_NEAR(variance, 0.01, 0.002);
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace kfpbench::harness
