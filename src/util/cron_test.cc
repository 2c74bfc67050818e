#include "util/cron.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench {
namespace {

using ::testing::HasSubstr;

WallTime At(const char* rfc3339) { return *ParseRfc3339(rfc3339); }

std::string NextAfter(const std::string& cron, const char* after) {
  auto c = CronSchedule::Parse(cron);
  EXPECT_TRUE(c.ok()) << cron << ": " << (c.ok() ? "" : c.error().message);
  if (!c.ok()) return "";
  auto next = c->Next(At(after));
  return next ? FormatRfc3339(*next) : "never";
}

TEST(CronTest, SixFieldsSecondsFirst) {
  EXPECT_EQ(NextAfter("* * * * * *", "2024-01-01T00:00:00Z"), "2024-01-01T00:00:01Z");
  EXPECT_EQ(NextAfter("*/10 * * * * *", "2024-01-01T00:00:05.5Z"), "2024-01-01T00:00:10Z");
  EXPECT_EQ(NextAfter("0 */5 * * * *", "2024-01-01T00:07:00Z"), "2024-01-01T00:10:00Z");
  EXPECT_EQ(NextAfter("0 30 9 * * 1-5", "2024-01-06T10:00:00Z"),  // a Saturday
            "2024-01-08T09:30:00Z");
  EXPECT_EQ(NextAfter("0 0 0 1 1 *", "2024-03-01T00:00:00Z"), "2025-01-01T00:00:00Z");
  EXPECT_EQ(NextAfter("15,45 0 12 * * *", "2024-01-01T12:00:20Z"), "2024-01-01T12:00:45Z");
  EXPECT_EQ(NextAfter("0 0 0 29 2 ?", "2024-03-01T00:00:00Z"), "2028-02-29T00:00:00Z");
  EXPECT_EQ(NextAfter("0 0 0 * JAN-FEB MON", "2024-02-27T00:00:00Z"), "2025-01-06T00:00:00Z");
  EXPECT_EQ(NextAfter("0 0 0 30 2 *", "2024-01-01T00:00:00Z"), "never");
  // Day of month and day of week both restricted: either matches (cron's rule).
  EXPECT_EQ(NextAfter("0 0 0 15 * 0", "2024-01-01T00:00:00Z"), "2024-01-07T00:00:00Z");
}

TEST(CronTest, Descriptors) {
  EXPECT_EQ(NextAfter("@every 5m", "2024-01-01T00:00:00Z"), "2024-01-01T00:05:00Z");
  EXPECT_EQ(NextAfter("@hourly", "2024-01-01T00:00:00Z"), "2024-01-01T01:00:00Z");
  EXPECT_EQ(NextAfter("@daily", "2024-01-01T10:00:00Z"), "2024-01-02T00:00:00Z");
  EXPECT_EQ(NextAfter("@weekly", "2024-01-01T10:00:00Z"), "2024-01-07T00:00:00Z");
}

TEST(CronTest, BadSchedulesSayWhy) {
  for (const char* bad : {"* * * * *", "61 * * * * *", "* * * * * * *", "*/0 * * * * *",
                          "5-1 * * * * *", "@sometimes", "@every nope", "a * * * * *"}) {
    auto c = CronSchedule::Parse(bad);
    EXPECT_FALSE(c.ok()) << bad;
    if (!c.ok()) {
      EXPECT_THAT(c.error().message, HasSubstr("invalid cron"));
    }
  }
}

// Space around a schedule is dropped, as KFP's cron parser splits on it. A
// request body can hold 32 MiB of it: trimmed by erasing one character at a
// time from the front, 1.6 MB of spaces took the server 17 s and 32 MiB
// would have held an API thread for hours.
TEST(CronTest, SpaceAroundTheScheduleIsDroppedHoweverLong) {
  const std::string spaces(4 << 20, ' ');
  EXPECT_EQ(NextAfter(spaces + "0 */5 * * * *\t\n" + spaces, "2024-01-01T00:07:00Z"),
            "2024-01-01T00:10:00Z");
  EXPECT_EQ(NextAfter(spaces + "@hourly", "2024-01-01T00:00:00Z"), "2024-01-01T01:00:00Z");
  EXPECT_FALSE(CronSchedule::Parse(spaces).ok());
}

}  // namespace
}  // namespace kfpbench
