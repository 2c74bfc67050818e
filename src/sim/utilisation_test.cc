// Utilisation is requested over allocatable resources, integrated exactly
// over time from the first task placed to the last run's end; checked
// against hand calculations on runs of the six-step pipeline (every task asks
// for 1 CPU and 2Gi; prepare, evaluate and publish take 10 s, the three
// trainers 60 s each, in parallel: 90 s alone).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config.h"
#include "sim/simulator.h"
#include "sim/test_support.h"

namespace kfpbench::sim {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

TEST(Utilisation, OneRunIsItsCoreSecondsOverTheNodesCoreSeconds) {
  auto r = Simulate(testing::FixedCluster(1, 4), testing::SixStepWorkload(1, 10s, 60s));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->makespan, 90s);
  // 10 + 3 x 60 + 10 + 10 = 210 core-seconds held, of 4 cores x 90 s = 360.
  EXPECT_NEAR(r->cpu_utilisation, 210.0 / 360.0, 1e-9);
  // 2Gi x 210 s of 16Gi x 90 s.
  EXPECT_NEAR(r->memory_utilisation, 2.0 * 210 / (16.0 * 90), 1e-9);
}

TEST(Utilisation, TimeBeforeTheFirstPlacementDoesNotCount) {
  // CreateRun takes 30 s at the API: the nodes idle for 30 s before any
  // task is placed, which must not dilute the figure.
  ClusterSpec c = testing::FixedCluster(1, 4);
  c.api.run_create = 30s;
  auto r = Simulate(c, testing::SixStepWorkload(1, 10s, 60s));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->makespan, 120s);
  EXPECT_NEAR(r->cpu_utilisation, 210.0 / 360.0, 1e-9);
}

TEST(Utilisation, PackedRunsFillEverySlot) {
  // Four runs on one 4-core node: FIFO never leaves a core idle (hand
  // schedule: prepares 0-10 s, trainers in three rounds 10-190 s, the four
  // evaluates 190-200 s, the publishes 200-210 s), so the makespan is the
  // work over the cores, 4 x 210 / 4 = 210 s, and utilisation is 100%.
  auto r = Simulate(testing::FixedCluster(1, 4), testing::SixStepWorkload(4, 10s, 60s));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->makespan, 210s);
  EXPECT_NEAR(r->cpu_utilisation, 1.0, 1e-9);
  // Two nodes (8 cores): prepares 0-10 s; eight trainers 10-70 s (runs 0, 1
  // and two of run 2's); run 2's third and run 3's three 70-130 s beside the
  // evaluates and publishes of runs 0 and 1; runs 2 and 3 evaluate 130-140 s
  // and publish 140-150 s. 840 core-seconds of 8 x 150 = 70%.
  auto two = Simulate(testing::FixedCluster(2, 4), testing::SixStepWorkload(4, 10s, 60s));
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->makespan, 150s);
  EXPECT_NEAR(two->cpu_utilisation, 0.7, 1e-9);
}

TEST(ClosedLoop, KeepsTheGivenNumberOfRunsInFlight) {
  WorkloadSpec w = testing::SixStepWorkload(5, 10s, 60s);
  w.arrival_kind = WorkloadSpec::ArrivalKind::kClosed;
  w.concurrency = 1;
  // One at a time with room to spare: five runs back to back.
  auto r = Simulate(testing::FixedCluster(4, 4), w);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->makespan, 450s);
  EXPECT_EQ(r->peak_runs_alive, 1);
  EXPECT_EQ(r->succeeded, 5);
  w.runs = 6;
  w.concurrency = 2;
  auto pairs = Simulate(testing::FixedCluster(4, 4), w);
  ASSERT_TRUE(pairs.ok());
  EXPECT_EQ(pairs->makespan, 270s);  // three rounds of two
  EXPECT_EQ(pairs->peak_runs_alive, 2);
  w.concurrency = 0;
  EXPECT_FALSE(Simulate(testing::FixedCluster(4, 4), w).ok());
}

TEST(ClosedLoop, WorkloadFileNamesItsConcurrency) {
  auto dir = testing::CapacityExamples();
  auto w = ParseWorkload(
      "pipeline: six_steps.yaml\nruns: 10\narrivals: {kind: closed, concurrency: 3}\n", dir);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->arrival_kind, WorkloadSpec::ArrivalKind::kClosed);
  EXPECT_EQ(w->concurrency, 3);
  auto missing = ParseWorkload("pipeline: six_steps.yaml\narrivals: {kind: closed}\n", dir);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("workload.arrivals.concurrency: required"))
      << missing.error().message;
  auto zero =
      ParseWorkload("pipeline: six_steps.yaml\narrivals: {kind: closed, concurrency: 0}\n", dir);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message,
            "workload.arrivals.concurrency: must be between 1 and 10000000, got 0");
}

}  // namespace
}  // namespace kfpbench::sim
