#include "capture/window.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kfpbench::capture {
namespace {

using ::testing::HasSubstr;

TEST(Window, ReadsAbsoluteTimesAndDurationsBack) {
  const WallTime now = *ParseRfc3339("2026-11-27T12:00:00Z");
  EXPECT_EQ(FormatRfc3339(*ParseWindowPoint("2026-11-20T00:00:00Z", now)), "2026-11-20T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(*ParseWindowPoint("24h", now)), "2026-11-26T12:00:00Z");
  EXPECT_EQ(FormatRfc3339(*ParseWindowPoint("90m", now)), "2026-11-27T10:30:00Z");
  auto bad = ParseWindowPoint("yesterday", now);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("RFC 3339"));
}

TEST(Window, FiltersCreatedAtAsKfpReadsIt) {
  auto filter = nlohmann::json::parse(CreatedAtFilter(*ParseRfc3339("2026-11-20T00:00:00Z"),
                                                      *ParseRfc3339("2026-11-21T00:00:00Z")));
  ASSERT_EQ(filter["predicates"].size(), 2u);
  EXPECT_EQ(filter["predicates"][0]["key"], "created_at");
  EXPECT_EQ(filter["predicates"][0]["operation"], "GREATER_THAN_EQUALS");
  EXPECT_EQ(filter["predicates"][0]["timestamp_value"], "2026-11-20T00:00:00Z");
  EXPECT_EQ(filter["predicates"][1]["operation"], "LESS_THAN");
}

}  // namespace
}  // namespace kfpbench::capture
