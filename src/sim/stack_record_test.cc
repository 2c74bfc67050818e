#include "sim/stack_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/test_support.h"

namespace kfpbench::sim {
namespace {

using namespace testing;  // the part's test helpers
using ::testing::HasSubstr;

// Two runs of a -> b (1 CPU, 1Gi each), the second arriving 5 s later, as
// the plan says; the record in wall seconds at a time scale of 10.
WorkloadPlan ChainPlan() {
  WorkloadPlan plan;
  for (int i = 0; i < 2; ++i) {
    PlannedRun& r = plan.runs.emplace_back();
    r.name = "run-" + std::to_string(i);
    r.arrival_seconds = 50.0 * i;
    r.tasks.push_back({1, -1, "a", true, {}, 100, 1000, int64_t{1} << 30, "exec-a"});
    r.tasks.push_back({2, -1, "b", true, {"a"}, 100, 1000, int64_t{1} << 30, "exec-b"});
  }
  return plan;
}

constexpr const char* kRecord = R"({
  "format": "kfpbench-stack-record/1", "time_scale": 10, "nodes": 2, "complete": true,
  "runs": [
    {"name": "run-0", "due": 0, "submitted": 0.1, "finished": 22, "phase": "Succeeded",
     "pods": [{"task": 1, "node": "n1", "created": 0.5, "scheduled": 1, "started": 1.2, "finished": 11},
              {"task": 2, "node": "n1", "created": 11.5, "scheduled": 12, "started": 12.1, "finished": 21}]},
    {"name": "run-1", "due": 5, "submitted": 5.1, "finished": 30, "phase": "Succeeded",
     "pods": [{"task": 1, "node": "n2", "created": 5.5, "scheduled": 6, "started": 6, "finished": 16},
              {"task": 2, "node": "n2", "created": 19, "scheduled": 20, "started": 20, "finished": 29}]}
  ]})";

TEST(StackRecord, BecomesTheSimulatorsResultInSimulatedTime) {
  auto record = ParseStackRecord(kRecord);
  ASSERT_TRUE(record.ok()) << record.error().message;
  auto result = StackResult(ChainPlan(), *record, FixedCluster(2, 4, int64_t{8} << 30));
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->runs, 2);
  EXPECT_EQ(result->succeeded, 2);
  EXPECT_DOUBLE_EQ(ToSeconds(result->makespan), 300);  // last end, 30 s wall x 10
  // Runs from their arrival: 22 s and 25 s of wall time.
  EXPECT_NEAR(result->run_ms.min(), 220'000, 220'000 * 0.01);
  EXPECT_NEAR(result->run_ms.max(), 250'000, 250'000 * 0.01);
  // Waits from ready (arrival, or a's end) to bound: 1, 1, 1 and 4 s wall.
  EXPECT_EQ(result->pending_ms.count(), 4u);
  EXPECT_NEAR(result->pending_ms.max(), 40'000, 40'000 * 0.01);
  EXPECT_NEAR(result->pending_ms.sum(), 70'000, 70'000 * 0.01);
  EXPECT_EQ(result->peak_nodes, 2);
  EXPECT_DOUBLE_EQ(result->node_hours, 2 * 300 / 3600.0);
  EXPECT_EQ(result->tasks_by_label.at("exec-a"), 2);
  // Bound to the end of main: 10 + 9 + 10 + 9 s wall of 1 CPU, over 2 x 4 CPU
  // from the first bound (1 s) to the end (30 s).
  EXPECT_NEAR(result->cpu_utilisation, 38.0 / (29 * 8), 1e-9);
  EXPECT_EQ(result->peak_runs_alive, 2);
}

TEST(StackRecord, RefusesARecordOfAnotherPlan) {
  auto record = ParseStackRecord(kRecord);
  ASSERT_TRUE(record.ok());
  WorkloadPlan plan = ChainPlan();
  plan.runs.pop_back();
  auto result = StackResult(plan, *record, FixedCluster(2, 4));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.error().message, HasSubstr("run-1 is not in the plan"));
  plan = ChainPlan();
  plan.runs[0].tasks[0].container = false;
  result = StackResult(plan, *record, FixedCluster(2, 4));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.error().message, HasSubstr("not a step of its plan"));
}

// Dependencies in a cycle (a malformed plan) never make their tasks ready:
// they are left out of the waits, and nothing recurses.
TEST(StackRecord, ACycleLeavesItsTasksUnready) {
  WorkloadPlan plan = ChainPlan();
  plan.runs[0].tasks[0].dependencies = {"b"};
  auto record = ParseStackRecord(kRecord);
  ASSERT_TRUE(record.ok());
  auto result = StackResult(plan, *record, FixedCluster(2, 4));
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->pending_ms.count(), 2u);  // run-1's only
}

TEST(StackRecord, RefusesMalformedRecords) {
  const std::pair<std::string, std::string> cases[] = {
      {"[", "stack record"},
      {R"({"format": "x", "time_scale": 1, "runs": []})", "format"},
      {R"({"format": "kfpbench-stack-record/1", "time_scale": 0, "runs": []})", "time_scale"},
      {R"({"format": "kfpbench-stack-record/1", "time_scale": 1})", "runs"},
      {R"({"format": "kfpbench-stack-record/1", "time_scale": 1, "runs": [{"name": "r", "due": -2}]})",
       "due"},
      {R"({"format": "kfpbench-stack-record/1", "time_scale": 1, "runs": [{"name": "r", "pods": [{"created": 1}]}]})",
       "task"},
  };
  for (const auto& [text, why] : cases) {
    auto r = ParseStackRecord(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_THAT(r.error().message, HasSubstr(why)) << text;
  }
  // A record where no run finished has no answer.
  auto unfinished = ParseStackRecord(
      R"({"format": "kfpbench-stack-record/1", "time_scale": 1, "nodes": 1, "runs": [{"name": "run-0"}]})");
  ASSERT_TRUE(unfinished.ok()) << unfinished.error().message;
  auto result = StackResult(ChainPlan(), *unfinished, FixedCluster(1, 4));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.error().message, HasSubstr("no run finished"));
}

}  // namespace
}  // namespace kfpbench::sim
