#include "sim/summary_levels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::sim {
namespace {

using ::testing::HasSubstr;

TEST(SummaryLevelsTest, ReadsEveryField) {
  auto s = ParseSummaryLevels(R"({
    "node": {"cpu": "16", "memory": "64Gi"},
    "tolerance": 0.05,
    "autoscaler": {"scan_interval": "10s", "scale_down_idle": "10m"},
    "summary_levels": [
      {"name": "one", "runs": 1, "nodes": {"min": 1, "max": 20}, "makespan": "8m40s",
       "p50": 520, "p95": "8m40s", "peak_nodes": 1},
      {"runs": 100, "nodes": 20, "arrivals": {"kind": "rate", "rate_per_second": 0.5},
       "makespan": 3600, "held_out": true},
      {"runs": 50, "nodes": {"max": 4, "initial": 2}, "node": {"cpu": 8, "memory": "32Gi"},
       "arrivals": {"kind": "closed", "concurrency": 5}}]})");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->levels.size(), 3u);
  EXPECT_DOUBLE_EQ(s->tolerance, 0.05);
  EXPECT_FALSE(s->delay_given);
  const SummaryLevel& one = s->levels[0];
  EXPECT_EQ(one.name, "one");
  EXPECT_EQ(one.pool.cpu, 16);
  EXPECT_EQ(one.pool.memory, int64_t{64} << 30);
  EXPECT_EQ(one.pool.min, 1);
  EXPECT_EQ(one.pool.max, 20);
  EXPECT_EQ(one.pool.initial, 1);
  EXPECT_DOUBLE_EQ(*one.makespan, 520);
  EXPECT_DOUBLE_EQ(*one.p50, 520);
  EXPECT_EQ(*one.peak_nodes, 1);
  const SummaryLevel& two = s->levels[1];
  EXPECT_EQ(two.name, "level 2");
  EXPECT_EQ(two.pool.min, 20);
  EXPECT_EQ(two.pool.max, 20);
  EXPECT_TRUE(two.held_out);
  EXPECT_EQ(two.arrival_kind, WorkloadSpec::ArrivalKind::kRate);
  EXPECT_DOUBLE_EQ(two.rate_per_second, 0.5);
  const SummaryLevel& three = s->levels[2];
  EXPECT_FALSE(three.measured());
  EXPECT_EQ(three.pool.cpu, 8);
  EXPECT_EQ(three.pool.initial, 2);
  EXPECT_EQ(three.arrival_kind, WorkloadSpec::ArrivalKind::kClosed);
  EXPECT_EQ(three.concurrency, 5);
}

TEST(SummaryLevelsTest, TellsASummaryFileFromResults) {
  EXPECT_TRUE(IsSummaryLevels(nlohmann::json::parse(R"({"summary_levels": []})")));
  EXPECT_FALSE(IsSummaryLevels(nlohmann::json::parse(R"({"runs": {"records": []}})")));
}

TEST(SummaryLevelsTest, BadInputNamesTheField) {
  const std::string node = R"("node": {"cpu": "16", "memory": "64Gi"}, )";
  auto level = [&](const std::string& fields) {
    return "{" + node + R"("summary_levels": [{"runs": 10, "nodes": 4, )" + fields + "}]}";
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "not valid JSON"},
      {"[1]", "expected a JSON object"},
      {R"({"node": {"cpu": "16", "memory": "64Gi"}})", "missing field 'summary_levels'"},
      {R"({"summary_levels": [{"runs": 1, "nodes": 1}]})", "summary_levels[0]: the node's cpu"},
      {"{" + node + R"("summary_levels": [{"nodes": 1}]})",
       "summary_levels[0]: missing field 'runs'"},
      {"{" + node + R"("summary_levels": [{"runs": 1}]})",
       "summary_levels[0]: missing field 'nodes'"},
      {level(R"("makespan": "soon")"), "summary_levels[0].makespan"},
      {level(R"("makespan": -3)"), "summary_levels[0].makespan: must be positive"},
      {level(R"("p95": true)"), "summary_levels[0].p95: expected a duration"},
      {level(R"("peak_nodes": 9, "makespan": 10)"), "summary_levels[0].peak_nodes: 9 is more"},
      {level(R"("held_out": true)"), "summary_levels[0].held_out"},
      {level(R"("arrivals": {"kind": "poisson"})"), "summary_levels[0].arrivals.kind"},
      {level(R"("arrivals": {"kind": "rate"})"), "summary_levels[0].arrivals: missing field"},
      {level(R"("colour": "red")"), "unknown field \"summary_levels[0].colour\""},
      {"{" + node + R"("summary_levels": [{"runs": 0, "nodes": 1}]})",
       "summary_levels[0].runs: must be between 1"},
      {"{" + node + R"("summary_levels": [{"runs": 1, "nodes": {"min": 3, "max": 2}}]})",
       "summary_levels[0].nodes.min: must be between 0 and 2"},
      {"{" + node + R"("tolerance": 2, "summary_levels": [{"runs": 1, "nodes": 1}]})",
       "tolerance: must be between 0 and 1"},
      {R"({"node": {"cpu": "lots", "memory": "1Gi"}, "summary_levels": []})", "node.cpu"},
      {"{" + node + R"("summary_levels": []})", "summary_levels: no level"},
  };
  for (const auto& [text, expected] : cases) {
    auto s = ParseSummaryLevels(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_THAT(s.error().message, HasSubstr(expected))
        << text << "\n  gave: " << s.error().message;
  }
}

}  // namespace
}  // namespace kfpbench::sim
