#include "engine/placement.h"

#include <gtest/gtest.h>

namespace kfpbench::engine {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

TEST(Demand, PrefersRequestThenLimitThenDefault) {
  Resources fallback{0.1, 0, 64 << 20, 0};
  EXPECT_EQ(DemandOf({2, 4, kGi, 2 * kGi}, fallback).cpu_millis, 2000);
  EXPECT_EQ(DemandOf({2, 4, kGi, 2 * kGi}, fallback).memory, kGi);
  EXPECT_EQ(DemandOf({0, 4, 0, 2 * kGi}, fallback).cpu_millis, 4000);
  EXPECT_EQ(DemandOf({0, 4, 0, 2 * kGi}, fallback).memory, 2 * kGi);
  EXPECT_EQ(DemandOf({}, fallback).cpu_millis, 100);
  EXPECT_EQ(DemandOf({}, fallback).memory, 64 << 20);
  EXPECT_EQ(DemandOf({}, {}).cpu_millis, 1);  // never zero
  EXPECT_EQ(DescribeDemand({1500, 3 * kGi / 2}), "1.5 CPU, 1.5Gi memory");
}

TEST(Placement, FirstFitInFifoOrder) {
  Placement p({{"a", 2, 4 * kGi}, {"b", 4, 4 * kGi}});
  p.Enqueue(1, {2000, kGi});  // a
  p.Enqueue(2, {3000, kGi});  // b
  p.Enqueue(3, {2000, kGi});  // nothing left that fits
  p.Enqueue(4, {1000, kGi});  // b (later but fits: scan the whole queue)
  auto placed = p.Schedule();
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_EQ(placed[0].ticket, 1u);
  EXPECT_EQ(placed[0].node, 0u);
  EXPECT_EQ(placed[1].ticket, 2u);
  EXPECT_EQ(placed[1].node, 1u);
  EXPECT_EQ(placed[2].ticket, 4u);
  EXPECT_EQ(placed[2].node, 1u);
  EXPECT_EQ(p.queued(), 1u);
  EXPECT_TRUE(p.Schedule().empty());
  p.Release(0, {2000, kGi});
  placed = p.Schedule();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].ticket, 3u);
  EXPECT_EQ(placed[0].node, 0u);
  EXPECT_EQ(p.queued(), 0u);
}

TEST(Placement, MemoryLimitsToo) {
  Placement p({{"a", 8, 2 * kGi}});
  p.Enqueue(1, {1000, 2 * kGi});
  p.Enqueue(2, {1000, 1});
  EXPECT_EQ(p.Schedule().size(), 1u);
  EXPECT_EQ(p.free(0).memory, 0);
  p.Release(0, {1000, 2 * kGi});
  EXPECT_EQ(p.Schedule().size(), 1u);
}

TEST(Placement, RemoveAndNeverFits) {
  Placement p({{"a", 1, kGi}, {"b", 2, 512 << 20}});
  EXPECT_TRUE(p.FitsSomeNode({2000, 256 << 20}));
  EXPECT_FALSE(p.FitsSomeNode({2000, kGi}));
  EXPECT_EQ(p.LargestNode().cpu_millis, 2000);
  p.Enqueue(1, {1000, kGi});
  p.Enqueue(2, {1000, kGi});
  EXPECT_TRUE(p.Remove(1));
  EXPECT_FALSE(p.Remove(1));
  auto placed = p.Schedule();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].ticket, 2u);
}

TEST(Placement, DefaultNodeIsThisMachine) {
  auto nodes = DefaultNodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_GE(nodes[0].cpu, 1);
  EXPECT_GT(nodes[0].memory, 0);
}

}  // namespace
}  // namespace kfpbench::engine
