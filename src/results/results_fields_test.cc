#include "results/results_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/pfr/core.hpp>

namespace kfpbench::results {
namespace {

using ::testing::Contains;
using ::testing::Pair;

// Every member of BenchmarkResults is named in the top-level table, with a
// merge rule (a table that names fewer does not compile: FieldTable::Merge).
TEST(ResultsFields, EveryMemberHasAMergeRule) {
  auto rules = kResultsFields.Rules();
  EXPECT_EQ(rules.size(), boost::pfr::tuple_size_v<BenchmarkResults>);
  for (const auto& [field, rule] : rules) EXPECT_FALSE(rule.empty()) << field;
  EXPECT_THAT(rules, Contains(Pair("scenario.time_scale", "must be equal")));
  EXPECT_THAT(rules, Contains(Pair("shard.count", "whole")));
  EXPECT_THAT(rules, Contains(Pair("operations", "per key")));
  EXPECT_THAT(rules, Contains(Pair("repetitions", "append")));
  for (const auto& [field, rule] : kOperationFields.Rules()) EXPECT_FALSE(rule.empty()) << field;
  for (const auto& [field, rule] : kGrowthCurveFields.Rules()) EXPECT_FALSE(rule.empty()) << field;
}

TEST(ResultsFields, EqualRuleRefusesADifferentValueAndNamesIt) {
  BenchmarkResults a, b;
  ASSERT_TRUE(kScenarioFields.MergeFields(a, b, {.first = true}).ok());
  b.time_scale = 2;
  Status s = kScenarioFields.MergeFields(a, b, {.first = false});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, ::testing::HasSubstr("time_scale: 1.0 in one part and 2.0"));
}

TEST(ResultsFields, WindowsAlignOnTheMergedSecond) {
  metrics::OperationStats a, b;
  a.windows = {
      {.second = 0, .count = 2, .errors = 0, .p50_us = 5, .p95_us = 9, .p99_us = 9, .max_us = 9}};
  b.windows = {
      {.second = 0, .count = 3, .errors = 1, .p50_us = 7, .p95_us = 8, .p99_us = 8, .max_us = 8},
      {.second = 1, .count = 1, .errors = 0, .p50_us = 1, .p95_us = 1, .p99_us = 1, .max_us = 1}};
  // b started one second after a: its second 0 is a's second 1.
  ASSERT_TRUE(kOperationFields.Merge(a, b, {.first = false, .shift_s = 1}).ok());
  ASSERT_EQ(a.windows.size(), 3u);
  EXPECT_EQ(a.windows[1].second, 1);
  EXPECT_EQ(a.windows[1].count, 3u);
  EXPECT_EQ(a.windows[2].second, 2);
}

TEST(ResultsFields, ErrorMessagesStayWithinTheRecordersCap) {
  metrics::OperationStats a, b;
  for (const char* m : {"a0", "a1", "a2", "a3", "a4"}) a.error_messages[m] = 1;
  b.error_messages = {{"a0", 2}, {"new", 1}};
  ASSERT_TRUE(kOperationFields.Merge(a, b, {.first = false}).ok());
  EXPECT_EQ(a.error_messages.size(), metrics::OperationStats::kMaxErrorMessages);
  EXPECT_EQ(a.error_messages.at("a0"), 3u);
}

}  // namespace
}  // namespace kfpbench::results
