#include "util/json_reader.h"

#include <gtest/gtest.h>

namespace kfpbench {
namespace {

using nlohmann::json;

std::string ErrorOf(JsonReader& r) {
  Status s = r.Finish();
  return s.ok() ? "" : s.error().message;
}

TEST(JsonReader, PlainReadsNumbersAsJsonNumbersOnly) {
  json j = {{"count", 3}, {"rate", 2.5}, {"big", "7"}};
  auto r = JsonReader::Plain(j, "level");
  uint64_t count = 0;
  double rate = 0;
  int64_t big = 0;
  r.Number("count", count);
  r.Number("rate", rate);
  EXPECT_EQ(count, 3u);
  EXPECT_EQ(rate, 2.5);
  r.Number("big", big);
  EXPECT_EQ(ErrorOf(r), "level.big: must be an integer");

  json n = {{"n", -1}};
  auto negative = JsonReader::Plain(n, "");
  negative.Number("n", count);
  EXPECT_EQ(ErrorOf(negative), "n: must be a non-negative integer");
}

TEST(JsonReader, PlainTakesOnlyTheExactNameAndIgnoresOthers) {
  json j = {{"runId", "x"}, {"extra", 1}};
  auto r = JsonReader::Plain(j, "");
  std::string id;
  r.String("run_id", id);
  EXPECT_EQ(id, "");
  EXPECT_EQ(ErrorOf(r), "");
}

TEST(JsonReader, RequiredFieldsAndNestedPathsAreNamed) {
  json j = {{"levels", {{{"runs_stored", 1}}}}};
  auto r = JsonReader::Plain(j, "growth.0");
  r.Array("levels", [](JsonReader& l) {
    int64_t target = 0;
    l.Require("target_runs");
    l.Number("target_runs", target);
  });
  EXPECT_EQ(ErrorOf(r), "growth.0.levels[0]: missing field 'target_runs'");

  json ops = {{"operations", {{"GetRun", {{"errors", "many"}}}}}};
  auto e = JsonReader::Plain(ops, "");
  e.Entries("operations", [](const std::string&, JsonReader& op) {
    uint64_t errors = 0;
    op.Number("errors", errors);
  });
  EXPECT_EQ(ErrorOf(e), "operations.GetRun.errors: must be a non-negative integer");
}

TEST(JsonReader, TimesMayBeEmptyOrAbsentWhereTheFormatSaysSo) {
  json j = {{"never", ""}, {"null", nullptr}, {"at", "2023-11-14T22:13:20Z"}};
  auto r = JsonReader::Plain(j, "");
  WallTime never = WallTime(std::chrono::seconds(1));
  std::optional<WallTime> null_time, at;
  r.TimeOrEmpty("never", never);
  r.OptionalTime("null", null_time);
  r.OptionalTime("at", at);
  EXPECT_EQ(never, WallTime{});
  EXPECT_FALSE(null_time);
  ASSERT_TRUE(at);
  EXPECT_EQ(*at, WallTime(std::chrono::seconds(1700000000)));
  EXPECT_EQ(ErrorOf(r), "");
}

TEST(JsonReader, TheFirstProblemIsKept) {
  json j = {{"a", 1}, {"b", 2}};
  auto r = JsonReader::Plain(j, "x");
  std::string a, b;
  r.String("a", a);
  r.String("b", b);
  EXPECT_EQ(ErrorOf(r), "x.a: must be a string");
}

}  // namespace
}  // namespace kfpbench
