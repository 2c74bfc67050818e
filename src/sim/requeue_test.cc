// The workflow controller's requeue time (cluster controlPlane.requeueTime,
// engine::EngineOptions::requeue_time): Argo acts on a finished pod only when
// it looks at the workflow again, so each DAG level and the run's end wait
// for that look, while the node is free at the step's end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config.h"
#include "sim/simulator.h"
#include "sim/test_support.h"
#include "sim/workload_plan.h"

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;
using namespace testing;  // the part's test helpers
using ::testing::HasSubstr;

// Six steps in four levels (prepare, three trainers, evaluate, publish).
TEST(RequeueTime, EachLevelAndTheRunsEndWaitForTheNextLook) {
  ClusterSpec cluster = FixedCluster(1, 16);
  auto plain = Simulate(cluster, SixStepWorkload(1, 60s, 60s));
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->makespan, 240s);
  cluster.requeue_time = 10s;
  auto argo = Simulate(cluster, SixStepWorkload(1, 60s, 60s));
  ASSERT_TRUE(argo.ok()) << argo.error().message;
  EXPECT_EQ(argo->makespan, 280s);  // 10 s after each of the four levels
  // Nodes are held for the steps alone: the node is free at a step's end.
  EXPECT_DOUBLE_EQ(argo->task_time.held, plain->task_time.held);
  // A task waits from its dependencies' end, the look included.
  EXPECT_EQ(plain->pending_ms.max(), 0);
  EXPECT_NEAR(argo->pending_ms.max(), 10'000, 100);
  // A step shorter than the requeue time is noticed at the look its own
  // start caused: 10 s after it started, not 10 s after it ended.
  auto short_steps = Simulate(cluster, SixStepWorkload(1, 3s, 3s));
  ASSERT_TRUE(short_steps.ok());
  EXPECT_EQ(short_steps->makespan, 40s);
}

// The freed node goes to the waiting task at once: two runs of the six
// steps on one node that holds one step at a time.
TEST(RequeueTime, AFreedNodeIsTakenAtOnce) {
  ClusterSpec cluster = FixedCluster(1, 1);
  cluster.requeue_time = 10s;
  WorkloadSpec w = SixStepWorkload(2, 60s, 60s);
  auto r = Simulate(cluster, w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // Twelve steps of 60 s back to back on one CPU: the node never waits for
  // a look (run-1's prepare fills run-0's first gap, and so on), and the
  // last run ends a look after its last step.
  EXPECT_EQ(r->makespan, 12 * 60s + 10s);
}

TEST(RequeueTime, ZeroLeavesTheAnswerAsItWas) {
  ClusterSpec cluster = FixedCluster(2, 4);
  WorkloadSpec w = SixStepWorkload(20, 30s, 90s);
  auto before = Simulate(cluster, w);
  cluster.requeue_time = Duration::zero();
  auto after = Simulate(cluster, w);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(ToJson(*before).dump(), ToJson(*after).dump());
}

TEST(RequeueTime, IsReadFromTheClusterFile) {
  auto c = ParseCluster(
      "pools: [{cpu: 4, memory: 16Gi, min: 1, max: 1}]\ncontrolPlane: {requeueTime: 10s}\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->requeue_time, 10s);
  auto none = ParseCluster("pools: [{cpu: 4, memory: 16Gi, min: 1, max: 1}]\n");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->requeue_time, Duration::zero());
  for (const auto& [yaml, why] : std::vector<std::pair<std::string, std::string>>{
           {"controlPlane: {requeue: 10s}", "cluster.controlPlane"},
           {"controlPlane: {requeueTime: soon}", "requeueTime"},
           {"controlPlane: {requeueTime: 2h}", "at most 1h"}}) {
    auto bad = ParseCluster("pools: [{cpu: 4, memory: 16Gi, min: 1, max: 1}]\n" + yaml + "\n");
    ASSERT_FALSE(bad.ok()) << yaml;
    EXPECT_THAT(bad.error().message, HasSubstr(why)) << yaml;
  }
}

// A plan carries the steps' own times; the simulation's answer beside it
// has the requeue time in it.
TEST(RequeueTime, APlanHoldsTheStepsOwnTimes) {
  ClusterSpec cluster = FixedCluster(1, 16);
  cluster.requeue_time = 10s;
  SimResult result;
  auto plan = PlanWorkload(cluster, SixStepWorkload(1, 3s, 60s), &result);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  for (const auto& t : plan->runs[0].tasks) {
    EXPECT_DOUBLE_EQ(t.seconds, t.label == "exec-train" ? 60.0 : 3.0) << t.name;
  }
  EXPECT_EQ(result.makespan, 10s + 70s + 10s + 10s);
}

}  // namespace
}  // namespace kfpbench::sim
