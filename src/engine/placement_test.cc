#include "engine/placement.h"
#include "util/units.h"

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::engine {
namespace {

TEST(Demand, PrefersRequestThenLimitThenDefault) {
  Resources fallback{0.1, 0, 64 << 20, 0, {}};
  EXPECT_EQ(DemandOf({2, 4, kGi, 2 * kGi, {}}, fallback).cpu_millis(), 2000);
  EXPECT_EQ(DemandOf({2, 4, kGi, 2 * kGi, {}}, fallback).memory(), kGi);
  EXPECT_EQ(DemandOf({0, 4, 0, 2 * kGi, {}}, fallback).cpu_millis(), 4000);
  EXPECT_EQ(DemandOf({0, 4, 0, 2 * kGi, {}}, fallback).memory(), 2 * kGi);
  EXPECT_EQ(DemandOf({}, fallback).cpu_millis(), 100);
  EXPECT_EQ(DemandOf({}, fallback).memory(), 64 << 20);
  EXPECT_EQ(DemandOf({}, {}).cpu_millis(), 1);  // never zero
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

// On a full cluster a freed node is refilled at once; first fit must still
// pick the leftmost node with room however the frees and placements
// interleave, and account every node's room exactly.
TEST(Placement, FullClusterRefillsTheLeftmostFreedNode) {
  Placement p({{"a", 4, 8 * kGi}, {"b", 4, 8 * kGi}, {"c", 4, 8 * kGi}});
  Placement::Ticket next = 1;
  for (int i = 0; i < 12; ++i) p.Enqueue(next++, {1000, kGi});
  ASSERT_EQ(p.Schedule().size(), 12u);
  auto place = [&](Demand d) {
    p.Enqueue(next++, d);
    auto placed = p.Schedule();
    return placed.empty() ? size_t{99} : placed[0].node;
  };
  p.Release(2, {1000, kGi});
  EXPECT_EQ(place({1000, kGi}), 2u);   // the only node with room
  EXPECT_EQ(place({1000, kGi}), 99u);  // full again
  p.Release(2, {1000, kGi});
  p.Release(0, {1000, kGi});  // a second node frees before anything is placed
  p.Enqueue(next++, {1000, kGi});
  auto placed = p.Schedule();  // the waiting ticket, then this one
  ASSERT_EQ(placed.size(), 2u);
  EXPECT_EQ(placed[0].node, 0u);  // leftmost first
  EXPECT_EQ(placed[1].node, 2u);
  p.Release(1, {1000, kGi});
  p.Release(1, {1000, kGi});           // the same node twice
  EXPECT_EQ(place({1000, kGi}), 1u);   // b, with 1 CPU left
  EXPECT_EQ(place({2000, kGi}), 99u);  // no node has 2 CPU free: it waits
  EXPECT_EQ(place({1000, kGi}), 1u);   // and blocks nothing that fits
  p.Release(2, {1000, kGi});
  EXPECT_TRUE(p.Schedule().empty());  // 1 CPU free on c: the 2-CPU ticket still waits
  EXPECT_EQ(p.free(0)[kCpu], 0);
  EXPECT_EQ(p.free(1)[kCpu], 0);
  EXPECT_EQ(p.free(2)[kCpu], 1000);
  EXPECT_EQ(p.used_total()[kCpu], 11000);
  EXPECT_EQ(p.queued(), 1u);
}

TEST(Placement, MemoryLimitsToo) {
  Placement p({{"a", 8, 2 * kGi}});
  p.Enqueue(1, {1000, 2 * kGi});
  p.Enqueue(2, {1000, 1});
  EXPECT_EQ(p.Schedule().size(), 1u);
  EXPECT_EQ(p.free(0)[kMemory], 0);
  p.Release(0, {1000, 2 * kGi});
  EXPECT_EQ(p.Schedule().size(), 1u);
}

TEST(Placement, RemoveAndNeverFits) {
  Placement p({{"a", 1, kGi}, {"b", 2, 512 << 20}});
  EXPECT_TRUE(p.FitsSomeNode({2000, 256 << 20}));
  EXPECT_FALSE(p.FitsSomeNode({2000, kGi}));
  EXPECT_EQ(p.LargestNode()[kCpu], 2000);
  p.Enqueue(1, {1000, kGi});
  p.Enqueue(2, {1000, kGi});
  EXPECT_TRUE(p.Remove(1));
  EXPECT_FALSE(p.Remove(1));
  auto placed = p.Schedule();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].ticket, 2u);
}

TEST(Placement, QueueOrderHoldsAcrossTicketsPlacedOrRemovedFromItsMiddle) {
  Placement p({{"a", 2, 4 * kGi}});
  p.Enqueue(1, {3000, kGi});  // larger than the node: stays queued
  p.Enqueue(2, {1000, kGi});
  p.Enqueue(3, {3000, kGi});
  p.Enqueue(4, {1000, kGi});
  p.Enqueue(5, {2000, kGi});
  auto placed = p.Schedule();
  ASSERT_EQ(placed.size(), 2u);
  EXPECT_EQ(placed[0].ticket, 2u);
  EXPECT_EQ(placed[1].ticket, 4u);
  EXPECT_EQ(p.queued(), 3u);
  EXPECT_FALSE(p.Remove(2));  // placed, no longer queued
  EXPECT_TRUE(p.Remove(3));
  EXPECT_EQ(p.queued(), 2u);
  std::vector<int64_t> queued_cpu;
  p.ForEachQueued([&](const Demand& d) {
    queued_cpu.push_back(d.cpu_millis());
    return true;
  });
  EXPECT_EQ(queued_cpu, (std::vector<int64_t>{3000, 2000}));
  p.Release(0, {1000, kGi});
  p.Release(0, {1000, kGi});
  placed = p.Schedule();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].ticket, 5u);
  EXPECT_EQ(p.queued(), 1u);
}

// The tree-backed first fit must pick exactly the node a linear scan would,
// through mixed demands (largest CPU and largest memory on different nodes),
// releases, and nodes added and removed.
TEST(Placement, FirstFitMatchesALinearScan) {
  std::mt19937_64 rng(5);
  Placement p({});
  std::vector<Demand> free;  // the model: the linear scan over this
  std::vector<bool> gone;
  std::vector<std::pair<size_t, Demand>> running;
  Placement::Ticket next = 1;
  std::map<Placement::Ticket, Demand> queued;
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int step = 0; step < 4000; ++step) {
    int op = static_cast<int>(pick(0, 9));
    if (op == 0 || free.empty()) {
      NodeSpec n{"n", static_cast<double>(pick(1, 8)), pick(1, 16) * kGi};
      size_t i = p.AddNode(n);
      if (i == free.size()) {
        free.push_back({});
        gone.push_back(false);
      }
      free[i] = {n.allocatable[kCpu], n.allocatable[kMemory]};
      gone[i] = false;
    } else if (op == 1) {
      size_t i = static_cast<size_t>(pick(0, static_cast<int64_t>(free.size()) - 1));
      bool idle = !gone[i] && std::none_of(running.begin(), running.end(),
                                           [&](const auto& r) { return r.first == i; });
      EXPECT_EQ(p.RemoveNode(i), idle);
      if (idle) {
        gone[i] = true;
        free[i] = {};
      }
    } else if (op <= 4 && !running.empty()) {
      size_t k = static_cast<size_t>(pick(0, static_cast<int64_t>(running.size()) - 1));
      auto [node, d] = running[k];
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      p.Release(node, d);
      free[node].amounts += d.amounts;
    } else {
      Demand d{pick(1, 6) * 500, pick(1, 12) * kGi};
      p.Enqueue(next, d);
      queued[next++] = d;
    }
    // What a linear first fit over the queue in order would place.
    std::vector<Placement::Placed> want;
    std::vector<Demand> model = free;
    for (const auto& [ticket, d] : queued) {
      for (size_t n = 0; n < model.size(); ++n) {
        if (!gone[n] && d.cpu_millis() <= model[n].cpu_millis() &&
            d.memory() <= model[n].memory()) {
          model[n].amounts -= d.amounts;
          want.push_back({ticket, n});
          break;
        }
      }
    }
    auto got = p.Schedule();
    ASSERT_EQ(got.size(), want.size()) << "step " << step;
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].ticket, want[k].ticket) << "step " << step;
      ASSERT_EQ(got[k].node, want[k].node) << "step " << step;
      running.push_back({got[k].node, queued[got[k].ticket]});
      queued.erase(got[k].ticket);
    }
    free = model;
  }
}

TEST(Placement, DefaultNodeIsThisMachine) {
  auto nodes = DefaultNodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_GE(nodes[0].allocatable[kCpu], 1000);
  EXPECT_GT(nodes[0].allocatable[kMemory], 0);
}

// --- node selectors, tolerations and affinity ------------------------------

NodeSpec Node(std::string name, std::map<std::string, std::string> labels,
              std::vector<Taint> taints = {}) {
  NodeSpec n(std::move(name), 4, 16 * kGi);
  n.labels = std::move(labels);
  n.taints = std::move(taints);
  return n;
}

TEST(Schedulable, TaintsNeedAMatchingTolerationAndPreferNoScheduleOnlySteers) {
  NodeSpec gpu = Node("gpu-0", {{"pool", "gpu"}}, {{"nvidia.com/gpu", "present", "NoSchedule"}});
  NodeSpec soft = Node("soft", {}, {{"spot", "true", "PreferNoSchedule"}});
  EXPECT_FALSE(Schedulable(gpu, nullptr));
  EXPECT_TRUE(Schedulable(soft, nullptr));
  ir::NodeScheduling tolerate;
  tolerate.tolerations.push_back({"nvidia.com/gpu", "Exists", "", "NoSchedule"});
  EXPECT_TRUE(Schedulable(gpu, &tolerate));
  ir::NodeScheduling wrong_value;
  wrong_value.tolerations.push_back({"nvidia.com/gpu", "Equal", "absent", ""});
  EXPECT_FALSE(Schedulable(gpu, &wrong_value));
  ir::NodeScheduling wrong_effect;
  wrong_effect.tolerations.push_back({"nvidia.com/gpu", "Exists", "", "NoExecute"});
  EXPECT_FALSE(Schedulable(gpu, &wrong_effect));
  ir::NodeScheduling everything;  // an empty key with Exists tolerates every taint
  everything.tolerations.push_back({"", "Exists", "", ""});
  EXPECT_TRUE(Schedulable(gpu, &everything));
}

TEST(Schedulable, SelectorLabelsMustAllMatchAndOneAffinityTermMustHold) {
  NodeSpec a = Node("a", {{"pool", "train"}, {"zone", "z1"}, {"cores", "16"}});
  ir::NodeScheduling selector;
  selector.node_selector = {{"pool", "train"}, {"zone", "z1"}};
  EXPECT_TRUE(Schedulable(a, &selector));
  selector.node_selector["zone"] = "z2";
  EXPECT_FALSE(Schedulable(a, &selector));

  ir::NodeScheduling affinity;
  affinity.required_terms = {{{"zone", "In", {"z2", "z3"}}},  // fails
                             {{"pool", "Exists", {}}, {"cores", "Gt", {"8"}}}};
  EXPECT_TRUE(Schedulable(a, &affinity));
  affinity.required_terms[1][1] = {"cores", "Lt", {"8"}};
  EXPECT_FALSE(Schedulable(a, &affinity));
  affinity.required_terms = {{{"gpu", "DoesNotExist", {}}, {"zone", "NotIn", {"z9"}}}};
  EXPECT_TRUE(Schedulable(a, &affinity));
  affinity.required_terms = {{{"metadata.name", "In", {"b"}}}};  // matchFields on the name
  EXPECT_FALSE(Schedulable(a, &affinity));
  affinity.required_terms = {{{"cores", "Gt", {"lots"}}}};  // not an integer: no match
  EXPECT_FALSE(Schedulable(a, &affinity));
}

TEST(PlacementRules, TasksGoOnlyWhereTheyMayAndUntaintedTasksAvoidTaintedNodes) {
  Placement p({Node("gpu-0", {{"pool", "gpu"}}, {{"gpu", "true", "NoSchedule"}}),
               Node("cpu-0", {{"pool", "cpu"}})});
  ir::NodeScheduling to_gpu;
  to_gpu.node_selector = {{"pool", "gpu"}};
  to_gpu.tolerations.push_back({"gpu", "Equal", "true", "NoSchedule"});
  Demand gpu_task{1000, kGi, &to_gpu};
  Demand plain{1000, kGi};
  p.Enqueue(1, plain);
  p.Enqueue(2, gpu_task);
  p.Enqueue(3, plain);
  auto placed = p.Schedule();
  std::map<Placement::Ticket, size_t> where;
  for (const auto& pl : placed) where[pl.ticket] = pl.node;
  ASSERT_EQ(where.size(), 3u);
  EXPECT_EQ(where[1], 1u);  // first fit would have taken gpu-0, which it may not
  EXPECT_EQ(where[2], 0u);
  EXPECT_EQ(where[3], 1u);
}

TEST(PlacementRules, ATaskNoNodeWillTakeSaysWhyAsTheSchedulerDoes) {
  Placement p({Node("gpu-0", {{"pool", "gpu"}}, {{"gpu", "true", "NoSchedule"}}),
               Node("cpu-0", {{"pool", "cpu"}}), Node("cpu-1", {{"pool", "cpu"}})});
  ir::NodeScheduling to_gpu;
  to_gpu.node_selector = {{"pool", "gpu"}};
  Demand d{1000, kGi, &to_gpu};
  EXPECT_FALSE(p.FitsSomeNode(d));
  EXPECT_EQ(p.WhyUnschedulable(d),
            "0/3 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 1 "
            "node(s) had untolerated taint");
  to_gpu.tolerations.push_back({"gpu", "Exists", "", ""});
  EXPECT_TRUE(p.FitsSomeNode(d));
  EXPECT_EQ(p.WhyUnschedulable(d), "");
  // A pool the autoscaler may add counts too.
  ir::NodeScheduling to_big;
  to_big.node_selector = {{"pool", "big"}};
  Demand big{1000, kGi, &to_big};
  EXPECT_FALSE(p.FitsSomeNode(big));
  p.AllowShape(Node("big-shape", {{"pool", "big"}}));
  EXPECT_TRUE(p.FitsSomeNode(big));
}

// Nodes added and removed at run time (the simulator's autoscaler).
TEST(PlacementNodes, AddRemoveAndReuseSlots) {
  Placement p({{"a", 1, kGi}});
  EXPECT_FALSE(p.FitsSomeNode({2000, kGi}));
  p.AllowShape({"shape", 2, 2 * kGi});
  EXPECT_TRUE(p.FitsSomeNode({2000, kGi}));
  EXPECT_EQ(p.LargestNode()[kCpu], 2000);

  p.Enqueue(1, {2000, kGi});
  EXPECT_TRUE(p.Schedule().empty());
  size_t b = p.AddNode({"b", 2, 2 * kGi});
  EXPECT_EQ(b, 1u);
  auto placed = p.Schedule();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].node, 1u);
  EXPECT_EQ(p.used(1)[kCpu], 2000);
  EXPECT_FALSE(p.RemoveNode(1));  // busy
  p.Release(1, {2000, kGi});
  EXPECT_TRUE(p.RemoveNode(1));
  EXPECT_TRUE(p.removed(1));
  EXPECT_FALSE(p.RemoveNode(1));  // already gone
  EXPECT_FALSE(p.RemoveNode(7));  // never existed
  // A removed node takes nothing; its slot comes back with the next node.
  p.Enqueue(2, {500, kGi / 2});
  placed = p.Schedule();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].node, 0u);
  EXPECT_EQ(p.AddNode({"c", 4, 4 * kGi}), 1u);
  EXPECT_EQ(p.node(1).name, "c");
  EXPECT_EQ(p.node_count(), 2u);
}

TEST(PlacementNodes, AddedNodesTakeTheLowestRemovedIndexFirst) {
  Placement p({});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(p.AddNode({"n", 1, kGi}), static_cast<size_t>(i));
  EXPECT_TRUE(p.RemoveNode(4));
  EXPECT_TRUE(p.RemoveNode(1));
  EXPECT_TRUE(p.RemoveNode(3));
  EXPECT_EQ(p.AddNode({"x", 1, kGi}), 1u);
  EXPECT_TRUE(p.RemoveNode(0));  // below the one just reused
  EXPECT_EQ(p.AddNode({"x", 1, kGi}), 0u);
  EXPECT_EQ(p.AddNode({"x", 1, kGi}), 3u);
  EXPECT_EQ(p.AddNode({"x", 1, kGi}), 4u);
  EXPECT_EQ(p.AddNode({"x", 1, kGi}), 6u);  // none removed: a new index
  EXPECT_EQ(p.node_count(), 7u);
}

TEST(PlacementNodes, SkipsTicketsThatCannotFitAfterALargerOneFailed) {
  Placement p({{"a", 2, 4 * kGi}});
  p.Enqueue(1, {3000, kGi});  // never fits now
  p.Enqueue(2, {3000, 2 * kGi});
  p.Enqueue(3, {1000, kGi});  // smaller: still placed (FIFO scan, not head-of-line)
  auto placed = p.Schedule();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].ticket, 3u);
  EXPECT_EQ(p.queued(), 2u);
}

// Resources beyond CPU and memory: an accelerator binds like any other.
NodeSpec GpuNode(std::string name, int64_t gpus) {
  NodeSpec n(std::move(name), 16, 64 * kGi);
  n.allocatable[*SlotOf("nvidia.com/gpu")] = gpus;
  return n;
}

Resources OneGpu() { return {1, 0, kGi, 0, {{"nvidia.com/gpu", 1}}}; }

TEST(PlacementResources, DemandCarriesTheAcceleratorKfpAsksFor) {
  ir::ResourceSpec ir;
  ir.cpu_request = 1;
  ir.memory_request = kGi;
  ir.accelerator_type = "nvidia.com/gpu";
  ir.accelerator_count = 2;
  Demand d = DemandOf(ResourcesOf(ir), {});
  EXPECT_EQ(d.amounts[*SlotOf("nvidia.com/gpu")], 2);
  EXPECT_EQ(DescribeDemand(d), "1 CPU, 1Gi memory, 2 nvidia.com/gpu");
  ir.accelerator_count = 0;  // a type without a count asks for nothing
  EXPECT_FALSE(DemandOf(ResourcesOf(ir), {}).amounts.AnyBeyondCpuAndMemory());
}

TEST(PlacementResources, AGpuStepWaitsForAGpuThoughCpuAndMemoryAreFree) {
  Placement p({GpuNode("gpu-0", 4)});
  const Demand gpu = DemandOf(OneGpu(), {});
  for (Placement::Ticket t = 1; t <= 6; ++t) p.Enqueue(t, gpu);
  p.Enqueue(7, Demand{1000, kGi});  // no GPU: takes the CPU the GPU steps leave
  auto placed = p.Schedule();
  std::vector<Placement::Ticket> tickets;
  for (const auto& pl : placed) tickets.push_back(pl.ticket);
  EXPECT_EQ(tickets, (std::vector<Placement::Ticket>{1, 2, 3, 4, 7}));
  EXPECT_EQ(p.queued(), 2u);
  EXPECT_EQ(p.used_total()[*SlotOf("nvidia.com/gpu")], 4);
  EXPECT_EQ(p.used(0)[kCpu], 5000);
  p.Release(0, gpu);  // one GPU back: the next GPU step in line takes it
  placed = p.Schedule();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].ticket, 5u);
}

TEST(PlacementResources, FirstFitSkipsNodesWithoutTheAccelerator) {
  Placement p({NodeSpec("cpu-0", 16, 64 * kGi), GpuNode("gpu-0", 1), GpuNode("gpu-1", 1)});
  const Demand gpu = DemandOf(OneGpu(), {});
  p.Enqueue(1, gpu);
  p.Enqueue(2, gpu);
  p.Enqueue(3, gpu);
  auto placed = p.Schedule();
  ASSERT_EQ(placed.size(), 2u);
  EXPECT_EQ(placed[0].node, 1u);
  EXPECT_EQ(placed[1].node, 2u);
  EXPECT_EQ(p.queued(), 1u);
}

TEST(PlacementResources, AStepAskingMoreGpusThanAnyNodeHasSaysWhich) {
  Placement p({GpuNode("gpu-0", 4), NodeSpec("cpu-0", 16, 64 * kGi)});
  Resources eight = OneGpu();
  eight.extended[0].amount = 8;
  const Demand d = DemandOf(eight, {});
  EXPECT_FALSE(p.FitsSomeNode(d));
  EXPECT_EQ(p.WhyUnschedulable(d),
            "0/2 nodes are available: 2 node(s) had insufficient nvidia.com/gpu for 1 CPU, 1Gi "
            "memory, 8 nvidia.com/gpu");
  EXPECT_EQ(DescribeResources(p.LargestNode()), "16 CPU, 64Gi memory, 4 nvidia.com/gpu");
  // A pool the autoscaler may add with 8 GPUs: the step waits for it.
  p.AllowShape(GpuNode("big", 8));
  EXPECT_TRUE(p.FitsSomeNode(d));
}

// Last in the file: it takes every free extended slot of the process.
TEST(PlacementResources, ANameBeyondTheTrackedSlotsFitsNowhereInsteadOfAskingLess) {
  ASSERT_TRUE(SlotOf("nvidia.com/gpu").has_value());
  ASSERT_TRUE(SlotOf("amd.com/gpu").has_value());
  int filled = 0;
  while (SlotOf(fmt::format("example.com/fill-{}", filled)).has_value()) ++filled;
  EXPECT_LE(filled, static_cast<int>(kUntracked - kStandardResources));
  Resources r{1, 0, kGi, 0, {{"example.com/one-too-many", 1}}};
  const Demand d = DemandOf(r, {});
  EXPECT_EQ(d.amounts[kUntracked], 1);
  NodeSpec node("n", 16, 64 * kGi);
  Placement p({node});
  EXPECT_FALSE(p.FitsSomeNode(d));
  EXPECT_THAT(p.WhyUnschedulable(d), ::testing::HasSubstr("past the ones tracked"));
}

}  // namespace
}  // namespace kfpbench::engine
