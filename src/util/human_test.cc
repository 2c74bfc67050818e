#include "util/human.h"

#include <cmath>

#include <gtest/gtest.h>

namespace kfpbench {
namespace {

using namespace std::chrono_literals;

Duration Seconds(double s) { return FromSeconds(s); }

// Issue 38: a makespan of 3,599.9 s printed as "59m59s", a second short of
// the truth. Shown figures round to their precision.
TEST(HumanDuration, RoundsToThePrecisionShown) {
  // 7,247 s used to print "2h0m": shown equal to a 2 h limit it exceeds.
  EXPECT_EQ(FormatDuration(7247s), "2h0m47s");
  EXPECT_EQ(FormatDuration(Seconds(3599.9)), "1h0m0s");
  EXPECT_EQ(FormatDuration(Seconds(3599.4)), "59m59s");
  EXPECT_EQ(FormatDuration(Seconds(59.96)), "1m0s");  // into the next unit's precision
  EXPECT_EQ(FormatDuration(Seconds(9.996)), "10s");
  EXPECT_EQ(FormatDuration(Seconds(0.9997)), "1s");
  EXPECT_EQ(FormatDuration(999600ns), "1ms");
  EXPECT_EQ(FormatDuration(Seconds(2.346)), "2.35s");
  EXPECT_EQ(FormatDuration(Seconds(-3599.9)), "-1h0m0s");
  EXPECT_EQ(FormatDuration(3600s), "1h0m0s");
  EXPECT_EQ(FormatDuration(0s), "0s");
  EXPECT_EQ(FormatDuration(5ns), "5ns");
}

// Rounding up at the ends of the range would overflow (UBSan caught it on a
// growth run's unbounded limit): the largest counts round down instead.
TEST(HumanDuration, TheEndsOfTheRangeDoNotOverflow) {
  EXPECT_EQ(FormatDuration(Duration::max()), "2562047h47m16s");
  EXPECT_EQ(FormatDuration(Duration::min()), "-2562047h47m16s");
  EXPECT_EQ(FormatDurationTo(Duration::max(), 3), "2562047h47m16.854s");
}

TEST(HumanDuration, ThreeSignificantDigitsBelowAMinute) {
  EXPECT_EQ(FormatDuration(Seconds(2.35)), "2.35s");  // the analytic line said "3s"
  EXPECT_EQ(FormatDuration(1250ms), "1.25s");
  EXPECT_EQ(FormatDuration(340ms), "340ms");
  EXPECT_EQ(FormatDuration(Seconds(12.349)), "12.3s");
  EXPECT_EQ(FormatDuration(1500ns), "1.5us");
  EXPECT_EQ(FormatDuration(125s), "2m5s");
  EXPECT_EQ(FormatDuration(-1250ms), "-1.25s");
  EXPECT_EQ(FormatDuration(90000s), "25h0m0s");
}

TEST(HumanDuration, ParsesBackToWithinHalfThePrecisionShown) {
  for (double s : {0.0123, 1.999, 59.999, 61.5, 3599.9, 7247.3, 86399.99, 12.349, 0.5}) {
    auto back = ParseDuration(FormatDuration(Seconds(s)));
    ASSERT_TRUE(back.ok()) << s;
    // Three significant digits below a minute, whole seconds above.
    const double half = s >= 60 ? 0.5 : s >= 10 ? 0.05 : s >= 1 ? 0.005 : 0.0005;
    EXPECT_LE(std::abs(ToSeconds(*back) - s), half + 1e-9) << s;
  }
}

TEST(HumanDuration, AgainstALimitAddsTheDigitsThatKeepTheComparison) {
  EXPECT_EQ(FormatDurationAgainst(Seconds(7200.4), 2h), "2h0m0.4s");
  EXPECT_EQ(FormatDurationAgainst(Seconds(7200.04), 2h), "2h0m0.04s");
  EXPECT_EQ(FormatDurationAgainst(2h, 2h), "2h0m0s");
  EXPECT_EQ(FormatDurationAgainst(Seconds(7247), 2h), "2h0m47s");
  // Rounded to the limit, a value below it gets the digits that say so.
  EXPECT_EQ(FormatDurationAgainst(Seconds(3599.9), 1h), "59m59.9s");
  EXPECT_EQ(FormatDurationAgainst(Seconds(3599.9), 2h), "1h0m0s");
  EXPECT_EQ(FormatDurationAgainst(Seconds(10.004), 10s), "10.004s");
  EXPECT_EQ(FormatDurationAgainst(Seconds(9.999), 10s), "9.999s");
}

TEST(HumanDuration, ExactAndFixed) {
  EXPECT_EQ(FormatDurationExact(2h), "2h0m0s");
  EXPECT_EQ(FormatDurationExact(Seconds(7200.5)), "2h0m0.5s");
  EXPECT_EQ(FormatDurationExact(Seconds(2.35)), "2.35s");
  EXPECT_EQ(FormatDurationTo(Seconds(7247.25), 1), "2h0m47.3s");
  EXPECT_EQ(FormatDurationTo(Seconds(59.96), 1), "1m0.0s");
}

TEST(HumanSize, BinaryUnitsWithoutExponents) {
  EXPECT_EQ(FormatBytes(1000.0 * 1024 * 1024 * 1024), "1000Gi");  // was "1e+03Gi"
  EXPECT_EQ(FormatBytes(512.0 * 1024 * 1024), "512Mi");
  EXPECT_EQ(FormatBytes(200.0 * 1024 * 1024), "200Mi");
  EXPECT_EQ(FormatBytes(3.0 * 1024 * 1024 * 1024 * 1024 * 0.9766), "2.92Ti");
  EXPECT_EQ(FormatBytes(1536), "1.5Ki");
  EXPECT_EQ(FormatBytes(512), "512B");
  EXPECT_EQ(FormatBytes(0), "0B");
  EXPECT_EQ(FormatBytes(1023.0 * 1024), "1023Ki");
}

TEST(HumanSize, NeverShowsALimitItDoesNotReach) {
  // One byte short of 16Gi is not "16Gi".
  EXPECT_EQ(FormatBytes(16.0 * 1024 * 1024 * 1024 - 1), "15.9Gi");
  EXPECT_EQ(FormatBytes(1024.0 * 1024 - 1), "1023Ki");
}

// Issue 38 section 5: no 5h55m40s when the model is known to 5-60%.
TEST(HumanDuration, CarriesThePrecisionItsErrorAllows) {
  const Duration d = FromSeconds(5 * 3600 + 55 * 60 + 40);
  EXPECT_EQ(FormatDurationKnownTo(d, 0.6), "about 6h0m0s");
  EXPECT_EQ(FormatDurationKnownTo(d, 0.05), "about 5h56m0s");
  EXPECT_EQ(FormatDurationKnownTo(d, 0), "5h55m40s");
  EXPECT_EQ(FormatDurationKnownTo(FromSeconds(12.3), 0.1), "12.3s");  // below a second: as it is
}

TEST(HumanCount, SingularAndPlural) {
  EXPECT_EQ(Plural(1, "node"), "1 node");
  EXPECT_EQ(Plural(2, "node"), "2 nodes");
  EXPECT_EQ(Plural(0, "run"), "0 runs");
  EXPECT_EQ(Plural(1, "replication"), "1 replication");
}

}  // namespace
}  // namespace kfpbench
