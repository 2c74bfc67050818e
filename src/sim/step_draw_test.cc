#include "sim/step_draw.h"

#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "sim/simulator.h"
#include "sim/test_support.h"

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;

exec::DurationDist Dist(const char* spec) {
  auto d = exec::ParseDurationDist(spec);
  EXPECT_TRUE(d.ok()) << d.error().message;
  return *d;
}

TEST(StepDraw, QuantilesAreTheDistributionsOwn) {
  EXPECT_EQ(DurationAt(Dist("7s"), 0.01), 7s);
  EXPECT_EQ(DurationAt(Dist("uniform:10s:20s"), 0.25), 12500ms);
  // A lognormal's median is its median; one sigma up is median x e^sigma
  // (the standard normal's CDF at 1 is 0.8413447461).
  EXPECT_NEAR(ToSeconds(DurationAt(Dist("lognormal:60s:0.3"), 0.5)), 60, 1e-6);
  EXPECT_NEAR(ToSeconds(DurationAt(Dist("lognormal:60s:0.3"), 0.8413447461)), 60 * std::exp(0.3),
              1e-5);
  EXPECT_NEAR(ToSeconds(DurationAt(Dist("lognormal:60s:0.3"), 1 - 0.8413447461)),
              60 * std::exp(-0.3), 1e-5);
  // The exponential's CDF at its mean is 1 - 1/e.
  EXPECT_NEAR(ToSeconds(DurationAt(Dist("exponential:10s"), 1 - std::exp(-1.0))), 10, 1e-6);
}

TEST(StepDraw, ExpectedDurations) {
  EXPECT_EQ(ExpectedDuration(Dist("uniform:1s:3s")), 2s);
  EXPECT_EQ(ExpectedDuration(Dist("exponential:10s")), 10s);
  EXPECT_NEAR(ToSeconds(ExpectedDuration(Dist("lognormal:60s:0.3"))), 60 * std::exp(0.045), 1e-6);
  StepModels m;
  m.fallback.duration = Dist("lognormal:60s:0.3");
  m.fallback.overhead = 3s;
  m.by_label["exec-train"].duration = Dist("uniform:1m:3m");
  StepModels e = ExpectedSteps(m);
  EXPECT_EQ(e.fallback.duration.kind, exec::DurationDist::Kind::kConstant);
  EXPECT_EQ(e.fallback.overhead, 3s);
  EXPECT_EQ(e.For("exec-train").duration.a, 2min);
}

TEST(StepDraw, UniformsAreFixedByTheirKeyAndSpreadEvenly) {
  EXPECT_EQ(TaskUniform(1, "run-3", "exec-train", 2), TaskUniform(1, "run-3", "exec-train", 2));
  std::set<double> distinct = {
      TaskUniform(1, "run-3", "exec-train", 2), TaskUniform(2, "run-3", "exec-train", 2),
      TaskUniform(1, "run-4", "exec-train", 2), TaskUniform(1, "run-3", "exec-step", 2),
      TaskUniform(1, "run-3", "exec-train", 1)};
  EXPECT_EQ(distinct.size(), 5u);
  // 40,000 draws: each tenth of (0, 1) holds 10% within 0.5 points, and the
  // lognormal they make has the expected mean within 1%.
  int deciles[10] = {};
  double sum = 0;
  const int n = 40000;
  for (int i = 0; i < n; ++i) {
    double u = TaskUniform(7, "run-" + std::to_string(i / 4), "exec-train", i % 4);
    ASSERT_GT(u, 0);
    ASSERT_LT(u, 1);
    ++deciles[static_cast<int>(u * 10)];
    sum += ToSeconds(DurationAt(Dist("lognormal:60s:0.3"), u));
  }
  for (int d : deciles) EXPECT_NEAR(d / static_cast<double>(n), 0.1, 0.005);
  EXPECT_NEAR(sum / n, 60 * std::exp(0.045), 0.01 * 60 * std::exp(0.045));
}

// Common random numbers: with room for every run at once, a run's duration is
// its own critical path, so adding runs only adds runs — the makespan (the
// slowest run) never falls, and more nodes than needed change nothing.
TEST(StepDraw, AddingRunsOrNodesKeepsTheRunsAlreadyThere) {
  WorkloadSpec w = testing::SixStepWorkload(1, 10s, 60s);
  w.steps.fallback.duration = Dist("lognormal:60s:0.3");
  w.steps.by_label["exec-train"].duration = Dist("lognormal:10m:0.4");
  Duration previous{0};
  std::vector<Duration> run_max;
  for (int64_t runs = 1; runs <= 30; ++runs) {
    w.runs = runs;
    auto r = Simulate(testing::FixedCluster(30, 4), w);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_GE(r->makespan, previous) << runs << " runs";
    previous = r->makespan;
    auto more_nodes = Simulate(testing::FixedCluster(60, 4), w);
    ASSERT_TRUE(more_nodes.ok());
    EXPECT_EQ(more_nodes->makespan, r->makespan) << runs << " runs";
  }
  // Another seed draws other times.
  w.seed = 2;
  auto other = Simulate(testing::FixedCluster(30, 4), w);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->makespan, previous);
}

}  // namespace
}  // namespace kfpbench::sim
