#include "plan/plan.h"

#include <gtest/gtest.h>

#include "sim/test_support.h"

namespace kfpbench::plan {
namespace {

using namespace std::chrono_literals;

sim::ClusterSpec Pool(int max) {
  sim::ClusterSpec c;
  c.pools.push_back({"workers", 4, int64_t{16} << 30, 0, max, -1, {}, {}});
  return c;
}

// prepare 10 s, three 60 s trainers, evaluate 10 s, publish 10 s: 90 s alone.
sim::WorkloadSpec Work() { return sim::testing::SixStepWorkload(1, 10s, 60s); }

TEST(Plan, WavesFromTheDag) {
  auto w = Waves(Pool(10), Work(), 8, 2);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->width, 3);           // the trainers
  EXPECT_EQ(w->slots_per_node, 4);  // 1 CPU, 2Gi tasks on 4 CPU, 16Gi
  EXPECT_EQ(w->runs_per_wave, 2);   // 8 slots / 3
  EXPECT_EQ(w->waves, 4);
  EXPECT_EQ(w->single_run, 90s);
  EXPECT_EQ(w->time, 360s);
}

TEST(Plan, TimeForMatchesTheSimulatorAndExplainsTheGap) {
  auto a = TimeFor(Pool(10), Work(), 8, 2);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_GE(a->makespan, 90s);
  EXPECT_LT(a->makespan, 360s);  // slots left by narrow stages get used
  EXPECT_NE(a->explanation.find("faster"), std::string::npos) << a->explanation;
  auto one = TimeFor(Pool(10), Work(), 1, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->makespan, 90s);
  EXPECT_TRUE(one->explanation.empty());  // one run: both say 90 s
}

TEST(Plan, NodesForIsTheFewestThatMeetTheDeadline) {
  auto a = NodesFor(Pool(20), Work(), 20, 200s);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_LE(a->makespan, 200s);
  auto fewer = TimeFor(Pool(20), Work(), 20, a->nodes - 1);
  ASSERT_TRUE(fewer.ok());
  EXPECT_GT(fewer->makespan, 200s);
  EXPECT_GT(a->analytic_nodes, 0);
  EXPECT_FALSE(NodesFor(Pool(20), Work(), 20, 60s).ok());  // one run alone takes 90 s
}

TEST(Plan, RunsInIsTheMostThatFinish) {
  auto a = RunsIn(Pool(10), Work(), 300s, 2);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_GE(a->runs, 2);
  EXPECT_LE(a->makespan, 300s);
  auto more = TimeFor(Pool(10), Work(), a->runs + 1, 2);
  ASSERT_TRUE(more.ok());
  EXPECT_GT(more->makespan, 300s);
  EXPECT_FALSE(RunsIn(Pool(10), Work(), 30s, 2).ok());
  EXPECT_FALSE(RunsIn(Pool(10), Work(), 300s, 0).ok());
  EXPECT_FALSE(TimeFor(Pool(10), Work(), 0, 2).ok());
}

TEST(Plan, ImpossibleClusterIsAnError) {
  sim::ClusterSpec tiny = Pool(3);
  tiny.pools[0].cpu = 0.5;  // no task fits
  EXPECT_FALSE(TimeFor(tiny, Work(), 2, 2).ok());
  EXPECT_FALSE(Waves(sim::ClusterSpec{}, Work(), 2, 2).ok());
}

}  // namespace
}  // namespace kfpbench::plan
