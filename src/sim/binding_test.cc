#include "sim/binding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/test_support.h"

namespace kfpbench::sim {
namespace {

using namespace std::chrono_literals;
using namespace testing;  // the part's test helpers

constexpr int64_t kGi = int64_t{1} << 30;

// Six-step runs: prepare, evaluate, publish 10 s; three trainers 60 s; every
// task asks 1 CPU and 2Gi.
Binding Binds(const ClusterSpec& c, const WorkloadSpec& w, SimResult* out = nullptr) {
  auto r = Simulate(c, w);
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r.ok()) return {};
  if (out != nullptr) *out = *r;
  return WhatBinds(*r);
}

TEST(Binding, NodesCpu) {
  // Eight runs on one 4-core node with 16Gi: four tasks at a time by CPU,
  // eight by memory.
  Binding b = Binds(FixedCluster(1, 4), SixStepWorkload(8, 10s, 60s));
  EXPECT_EQ(b.what, Binds::kCpu) << b.text;
  EXPECT_GT(b.pending_share, 0.3);
  EXPECT_THAT(b.text, ::testing::HasSubstr("nodes' CPU: tasks spent "));
}

TEST(Binding, NodesMemory) {
  // 16 cores but 4Gi: two 2Gi tasks per node, by memory.
  Binding b = Binds(FixedCluster(1, 16, 4 * kGi), SixStepWorkload(8, 10s, 60s));
  EXPECT_EQ(b.what, Binds::kMemory) << b.text;
  EXPECT_THAT(b.text, ::testing::HasSubstr("memory 100%"));
}

TEST(Binding, TheAutoscalersDelay) {
  // Nodes arrive ten minutes after they are asked for; nothing runs before.
  ClusterSpec c;
  c.pools.push_back({"pool", 4, 16 * kGi, 0, 50, -1, {}, {}, {}});
  c.autoscaler.provisioning_delay = 10min;
  Binding b = Binds(c, SixStepWorkload(3, 10s, 60s));
  EXPECT_EQ(b.what, Binds::kAutoscaler) << b.text;
  EXPECT_GE(b.provisioning_share, 0.5);
}

TEST(Binding, ASharedServiceByItsDemand) {
  // Every trainer uploads 30Gi through 1Gi/s: 90 s a run that nodes cannot
  // shorten.
  ClusterSpec c = FixedCluster(20, 4);
  c.artifact_store.bandwidth = static_cast<double>(kGi);
  WorkloadSpec w = SixStepWorkload(20, 10s, 60s);
  w.steps.by_label["exec-train"].artifact_bytes = 30 * kGi;
  Binding b = Binds(c, w);
  EXPECT_EQ(b.what, Binds::kStore) << b.text;
  EXPECT_THAT(b.text, ::testing::HasSubstr("more nodes cannot help"));
}

TEST(Binding, AStoreThatIsNotBusyButHoldsNodesWhileTasksWait) {
  // Thirty runs on one 4-core node; each trainer uploads 5 s worth alone,
  // but a run's three trainers end together and share the link, so each
  // holds its core for up to 15 s more. The store is idle most of the time,
  // its demand far below the makespan, and still it costs the nodes time.
  ClusterSpec c = FixedCluster(1, 4);
  c.artifact_store.bandwidth = static_cast<double>(kGi);
  WorkloadSpec w = SixStepWorkload(30, 10s, 60s);
  w.steps.by_label["exec-train"].artifact_bytes = 5 * kGi;
  SimResult with;
  Binding b = Binds(c, w, &with);
  EXPECT_EQ(b.what, Binds::kStore) << b.text;
  EXPECT_LT(with.artifact_store.utilisation, 0.5);
  EXPECT_TRUE(Bottleneck(with).empty());  // its demand alone names nothing
  EXPECT_GE(b.store_share, 0.1);
  EXPECT_THAT(b.text, ::testing::HasSubstr("inside it (queued or served), though it was"));
  // And it is real: without the store the same runs end sooner.
  c.artifact_store.bandwidth = 0;
  SimResult without;
  Binds(c, w, &without);
  EXPECT_GT(ToSeconds(with.makespan), 1.1 * ToSeconds(without.makespan));
}

TEST(Binding, AnApiThatHoldsNodes) {
  // Ten workers, 5 s per status update: never saturated, but each task
  // spends 10 s of its hold in it.
  ClusterSpec c = FixedCluster(1, 4);
  c.api.task_update = 5s;
  c.api.workers = 10;
  Binding b = Binds(c, SixStepWorkload(30, 10s, 60s));
  EXPECT_EQ(b.what, Binds::kApi) << b.text;
  EXPECT_GE(b.api_share, 0.1);
}

TEST(Binding, NothingWhenNothingWaits) {
  Binding b = Binds(FixedCluster(4, 16), SixStepWorkload(2, 10s, 60s));
  EXPECT_EQ(b.what, Binds::kNothing) << b.text;
  EXPECT_THAT(b.text, ::testing::HasSubstr("each run's own steps set the pace"));
}

}  // namespace
}  // namespace kfpbench::sim
