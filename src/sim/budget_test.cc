#include "sim/budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config.h"
#include "sim/simulator.h"
#include "sim/test_support.h"

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;
using testing::CapacityExamples;
using testing::FixedCluster;
using ::testing::HasSubstr;
using testing::SixStepWorkload;

std::string ClusterError(const std::string& yaml) {
  auto c = ParseCluster(yaml);
  return c.ok() ? "ok" : c.error().message;
}

std::string WorkloadError(const std::string& yaml) {
  auto w = ParseWorkload("pipeline: six_steps.yaml\n" + yaml, CapacityExamples());
  return w.ok() ? "ok" : w.error().message;
}

// Each of these once crashed, hung or grew without bound (issue 30).
TEST(SimBudget, ClusterFilesThatCannotBeSimulatedAreRefusedByField) {
  EXPECT_EQ(ClusterError("pools: [{cpu: 4, memory: 16Gi, min: 100000000, max: 100000000}]"),
            "cluster.pools[0].max: must be between 0 and 100000, got 100000000");
  EXPECT_EQ(ClusterError("pools: [{cpu: 4, memory: 16Gi, min: 100000000, max: 2}]"),
            "cluster.pools[0].min: must be between 0 and 100000, got 100000000");
  EXPECT_EQ(ClusterError("pools: [{cpu: 4, memory: 16Gi, max: 3000000000}]"),
            "cluster.pools[0].max: must be between 0 and 100000, got 3000000000");
  EXPECT_EQ(ClusterError("pools: [{cpu: 4, memory: 16Gi, max: 2}]\n"
                         "autoscaler: {scanInterval: 1ns}"),
            "cluster.autoscaler.scanInterval: must be at least 100ms");
  EXPECT_EQ(ClusterError("pools: [{cpu: 4, memory: 16Gi, max: 2}]\n"
                         "autoscaler: {provisioningDelay: 100000h}"),
            "cluster.autoscaler.provisioningDelay: must be at most ten years");
  EXPECT_EQ(ClusterError("pools: [{cpu: 1e300, memory: 16Gi, max: 2}]"),
            "cluster.pools[0].cpu: invalid CPU quantity '1e300': too large");
  EXPECT_EQ(ClusterError("pools: [{cpu: 4, memory: 16Gi, max: 2}]\napi: {workers: 0}"),
            "cluster.api.workers: must be between 1 and 1000000, got 0");
}

TEST(SimBudget, WorkloadNumbersMustBeFiniteAndInRange) {
  EXPECT_EQ(WorkloadError("runs: 1000000000"),
            "workload.runs: must be between 1 and 10000000, got 1000000000");
  for (const char* rate : {".nan", ".inf", "-.inf"}) {
    EXPECT_EQ(
        WorkloadError(std::string("runs: 5\narrivals: {kind: rate, ratePerSecond: ") + rate + "}"),
        "workload.arrivals.ratePerSecond: expected a finite number")
        << rate;
  }
  for (const char* rate : {"1e-300", "1e300", "0", "-1"}) {
    EXPECT_THAT(
        WorkloadError(std::string("runs: 5\narrivals: {kind: rate, ratePerSecond: ") + rate + "}"),
        HasSubstr("workload.arrivals.ratePerSecond: must be between 1e-06 and 1e+06 runs a "
                  "second"))
        << rate;
  }
  EXPECT_EQ(WorkloadError("arrivals: {kind: closed, concurrency: 20000000}"),
            "workload.arrivals.concurrency: must be between 1 and 10000000, got 20000000");
}

TEST(SimBudget, ArrivalsCsvOffsetsMustBeFiniteAndWithinTenYears) {
  EXPECT_FALSE(ParseArrivalsCsv("offset\nnan\n").ok());
  EXPECT_FALSE(ParseArrivalsCsv("offset\n1e300\n").ok());
  EXPECT_FALSE(ParseArrivalsCsv("offset\ninf\n").ok());
  EXPECT_TRUE(ParseArrivalsCsv("offset\n86400\n").ok());
}

TEST(SimBudget, TheEstimateCountsTasksAndMemoryPerRun) {
  WorkloadSpec w = SixStepWorkload(1000, 1s, 2s);
  SimEstimate e = EstimateSimulation(FixedCluster(2, 4), w, 10s);
  EXPECT_EQ(e.runs, 1000);
  EXPECT_EQ(e.runs_at_once, 1000);
  EXPECT_GE(e.tasks_per_run, 6);
  EXPECT_GT(e.run_bytes, 0u);
  EXPECT_GT(e.events, 6000u);
  w.arrival_kind = WorkloadSpec::ArrivalKind::kRate;
  w.rate_per_second = 0.5;
  e = EstimateSimulation(FixedCluster(2, 4), w, 10s);
  EXPECT_EQ(e.runs_at_once, 0);  // unknown before the simulation
  EXPECT_DOUBLE_EQ(e.arrival_window_seconds, 2000);
}

TEST(SimBudget, ASimulationThatCannotFitIsRefusedWithTheNumbers) {
  WorkloadSpec w = SixStepWorkload(100000, 1s, 2s);
  SimOptions small;
  small.memory_budget = 10 << 20;  // 10 MiB
  auto r = Simulate(FixedCluster(2, 4), w, small);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("100000 runs in flight at once need about"))
      << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr("at most")) << r.error().message;

  w.runs = 20'000'000;  // past the parser's bound, as plan --runs could ask
  r = Simulate(FixedCluster(2, 4), w);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "20000000 runs is more than one simulation takes (10000000 at most)");

  w = SixStepWorkload(1000, 1s, 2s);
  w.arrival_kind = WorkloadSpec::ArrivalKind::kRate;
  w.rate_per_second = 1e-300;  // would be all at once through a wrapped conversion
  r = Simulate(FixedCluster(2, 4), w);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("arrival rate must be between"));
  w.rate_per_second = std::nan("");
  EXPECT_FALSE(Simulate(FixedCluster(2, 4), w).ok());
}

TEST(SimBudget, ClustersPastTheNodeLimitAreRefusedBeforeAnyNodeIsMade) {
  ClusterSpec c = FixedCluster(2, 4);
  c.pools[0].min = c.pools[0].max = c.pools[0].initial = 100'000'000;
  auto r = Simulate(c, SixStepWorkload(1, 1s, 1s));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("above the 100000 nodes a simulation takes"))
      << r.error().message;
  c = FixedCluster(2, 4);
  c.pools.push_back(c.pools[0]);
  c.pools[0].max = c.pools[1].max = 60'000;
  EXPECT_THAT(ValidateCluster(c).error().message, HasSubstr("add up to 120000 nodes"));
  c = FixedCluster(2, 4);
  c.autoscaler.scan_interval = 1ns;
  EXPECT_EQ(ValidateCluster(c).error().message, "autoscaler scanInterval must be at least 100ms");
}

// Open-loop arrivals that outrun the cluster pile up as runs in flight: the
// simulation stops, saying why, before they outgrow the memory budget.
TEST(SimBudget, ArrivalsTheClusterCannotKeepUpWithStopTheSimulationClearly) {
  WorkloadSpec w = SixStepWorkload(20000, 10s, 60s);
  w.arrival_kind = WorkloadSpec::ArrivalKind::kRate;
  w.rate_per_second = 100;
  SimOptions small;
  small.memory_budget = 2 << 20;  // a few hundred runs
  auto r = Simulate(FixedCluster(1, 2), w, small);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("runs were in flight at once")) << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr("the cluster does not keep up with the arrivals"));
}

}  // namespace
}  // namespace kfpbench::sim
