#include "util/human.h"

#include <gtest/gtest.h>

namespace kfpbench {
namespace {

using namespace std::chrono_literals;

Duration Seconds(double s) { return FromSeconds(s); }

TEST(HumanDuration, NeverRoundsAcrossALimit) {
  // 7,247 s used to print "2h0m": shown equal to a 2 h limit it exceeds.
  EXPECT_EQ(FormatDuration(7247s), "2h0m47s");
  // 3,599.9 s is below the hour and shows so, never "1h0m0s".
  EXPECT_EQ(FormatDuration(Seconds(3599.9)), "59m59s");
  EXPECT_EQ(FormatDuration(Seconds(59.96)), "59.9s");  // not "60s"
  EXPECT_EQ(FormatDuration(3600s), "1h0m0s");
  EXPECT_EQ(FormatDuration(0s), "0s");
  EXPECT_EQ(FormatDuration(5ns), "5ns");
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

TEST(HumanDuration, ParsesBackToAtMostTheTrueValue) {
  for (double s : {0.0123, 1.999, 59.999, 61.5, 3599.9, 7247.3, 86399.99}) {
    auto back = ParseDuration(FormatDuration(Seconds(s)));
    ASSERT_TRUE(back.ok()) << s;
    EXPECT_LE(*back, Seconds(s)) << s;
  }
}

TEST(HumanDuration, AgainstALimitAddsTheDigitsThatKeepTheComparison) {
  EXPECT_EQ(FormatDurationAgainst(Seconds(7200.4), 2h), "2h0m0.4s");
  EXPECT_EQ(FormatDurationAgainst(Seconds(7200.04), 2h), "2h0m0.04s");
  EXPECT_EQ(FormatDurationAgainst(2h, 2h), "2h0m0s");
  EXPECT_EQ(FormatDurationAgainst(Seconds(7247), 2h), "2h0m47s");
  EXPECT_EQ(FormatDurationAgainst(Seconds(3599.9), 1h), "59m59s");
  EXPECT_EQ(FormatDurationAgainst(Seconds(10.004), 10s), "10.004s");
  EXPECT_EQ(FormatDurationAgainst(Seconds(9.999), 10s), "9.99s");
}

TEST(HumanDuration, ExactAndFixed) {
  EXPECT_EQ(FormatDurationExact(2h), "2h0m0s");
  EXPECT_EQ(FormatDurationExact(Seconds(7200.5)), "2h0m0.5s");
  EXPECT_EQ(FormatDurationExact(Seconds(2.35)), "2.35s");
  EXPECT_EQ(FormatDurationTo(Seconds(7247.25), 1), "2h0m47.2s");
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

TEST(HumanCount, SingularAndPlural) {
  EXPECT_EQ(Plural(1, "node"), "1 node");
  EXPECT_EQ(Plural(2, "node"), "2 nodes");
  EXPECT_EQ(Plural(0, "run"), "0 runs");
  EXPECT_EQ(Plural(1, "replication"), "1 replication");
}

}  // namespace
}  // namespace kfpbench
