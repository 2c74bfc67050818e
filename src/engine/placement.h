// Bin-packing of tasks onto nodes, the way a Kubernetes scheduler sees it:
// each task asks for a list of resources (CPU, memory, accelerators...),
// nodes have fixed allocatable capacity of each, and a task that does not
// fit waits in a FIFO queue until one does.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "engine/resources.h"
#include "ir/pipeline_spec.h"

namespace kfpbench::engine {

// What a task occupies on its node.
struct Demand {
  Demand() = default;
  Demand(int64_t cpu_millis, int64_t memory, const ir::NodeScheduling* rules = nullptr)
      : amounts(cpu_millis, memory), scheduling(rules) {}

  ResourceList amounts;
  int64_t cpu_millis() const { return amounts[kCpu]; }
  int64_t memory() const { return amounts[kMemory]; }
  // Where the task may go (node selector, tolerations, affinity); null: any
  // untainted node. Points into the run's PipelineSpec, which outlives it.
  const ir::NodeScheduling* scheduling = nullptr;
};

// Whether a task may be placed on `node`, as kube-scheduler's filters decide:
// every NoSchedule/NoExecute taint tolerated, every node-selector label
// present, and one required node-affinity term matched. Null: no rules.
bool Schedulable(const NodeSpec& node, const ir::NodeScheduling* scheduling);

// What an executor's IR resources ask for. KFP's accelerator is an extended
// resource named by its type: the driver sets `resourceCount` as the
// container's limit of `resourceType`.
Resources ResourcesOf(const ir::ResourceSpec& r);

// CPU and memory: the request if set, else the limit, else the fallback's
// request or limit. Extended resources: the task's own (their limit). An
// extended resource with no slot left makes the demand impossible (an
// amount no node has), never silently smaller.
Demand DemandOf(const Resources& task, const Resources& fallback);

// One node the size of this machine (online cores, physical memory).
std::vector<NodeSpec> DefaultNodes();

// "2 CPU, 1.5Gi memory", and any accelerator ("1 nvidia.com/gpu").
std::string DescribeDemand(const Demand& d);

class Placement {
 public:
  using Ticket = uint64_t;
  struct Placed {
    Ticket ticket;
    size_t node;
  };

  explicit Placement(std::vector<NodeSpec> nodes);

  // Whether the demand fits an empty node it may go to; a task that never
  // fits must not wait.
  bool FitsSomeNode(const Demand& d) const;
  // Why it fits no node, as kube-scheduler words it ("0/3 nodes are
  // available: 2 node(s) didn't match Pod's node affinity/selector, ...");
  // empty when it fits one.
  std::string WhyUnschedulable(const Demand& d) const;
  // The largest node (by CPU, then memory), for error messages.
  ResourceList LargestNode() const;

  void Enqueue(Ticket ticket, const Demand& d);
  // Drops a queued ticket; false when it is not queued. Scans the queue
  // (only a run's cancellation removes tickets).
  bool Remove(Ticket ticket);
  // Scans the queue in order and places, first fit over nodes, every ticket
  // that fits now, appending them to `placed`. Placed tickets leave the queue
  // and hold their demand until Release.
  void Schedule(std::vector<Placed>& placed);
  std::vector<Placed> Schedule() {
    std::vector<Placed> placed;
    Schedule(placed);
    return placed;
  }
  void Release(size_t node, const Demand& d);

  // Runtime node changes, for the simulator's autoscaler. A node index stays
  // valid for as long as the node exists; a removed node's slot is reused by
  // a later AddNode.
  size_t AddNode(const NodeSpec& node);
  // Removes an idle node (nothing placed on it); false if it holds work or is
  // already gone.
  bool RemoveNode(size_t i);
  bool removed(size_t i) const { return removed_[i]; }
  // What is placed on node i right now.
  ResourceList used(size_t i) const { return capacity_[i] - free_[i]; }
  // What is placed on all nodes right now, kept as tasks come and go (a sum
  // over nodes would cost a scan per question).
  const ResourceList& used_total() const { return used_total_; }
  // A shape that a node may have later (an autoscaled pool): a task that fits
  // one waits in the queue instead of failing at once.
  void AllowShape(const NodeSpec& shape);
  // Calls fn(demand) for queued tickets in queue order until it returns false.
  template <typename Fn>
  void ForEachQueued(Fn&& fn) const {
    for (const auto& e : queue_) {
      if (e.queued && !fn(e.demand)) return;
    }
  }

  size_t queued() const { return queued_; }
  // The ticket at the head of the queue, placed first when room frees up;
  // 0 when none is queued (tickets are nonzero).
  Ticket first_queued() const { return queue_.empty() ? 0 : queue_.front().ticket; }
  bool any_taints() const { return any_taints_; }
  const NodeSpec& node(size_t i) const { return nodes_[i]; }
  size_t node_count() const { return nodes_.size(); }
  const ResourceList& free(size_t i) const { return free_[i]; }

 private:
  // Tickets placed or removed from the middle of the queue stay as gaps
  // (queued false) until they reach its front or outnumber the rest: the
  // queue is contiguous, with no allocation or hashing per ticket.
  struct Entry {
    Ticket ticket;
    Demand demand;
    bool queued;
  };
  std::vector<NodeSpec> nodes_;
  std::vector<ResourceList> capacity_;
  std::vector<ResourceList> free_;
  std::vector<bool> removed_;
  // No node below it is removed: AddNode reuses the lowest removed index
  // without scanning a thousand live nodes first.
  size_t first_removed_ = 0;
  std::vector<ResourceList> shapes_;  // AllowShape
  std::vector<NodeSpec> shape_nodes_;
  // Some node or shape has a taint or a task has rules: first fit must then
  // test each node, not only its free room.
  bool any_taints_ = false;
  bool Eligible(size_t i, const Demand& d) const {
    return (d.scheduling == nullptr && !any_taints_) || Schedulable(nodes_[i], d.scheduling);
  }
  // Nodes with some CPU and memory free, so Schedule can stop early without
  // scanning every node for every queued ticket.
  size_t nodes_with_room_ = 0;
  ResourceList used_total_;
  // Every demand asks for some CPU and memory (DemandOf): a node with none
  // of either free takes nothing.
  bool HasRoom(size_t i) const { return free_[i][kCpu] > 0 && free_[i][kMemory] > 0; }
  // First fit over many nodes: a tree over the nodes whose every inner entry
  // holds the largest free CPU and the largest free memory below it, so the
  // search skips whole ranges of full nodes instead of testing each one.
  // It indexes the two resources every task asks for; a task asking for
  // more (an accelerator, storage) takes the scan in order, as rules do:
  // nodes that offer those are few.
  // The most CPU and the most memory free in a range of nodes (not
  // necessarily on one node): 16 bytes, four to a cache line.
  struct Room {
    int64_t cpu_millis = 0;
    int64_t memory = 0;
  };
  std::vector<Room> room_;  // 1-based heap layout; leaves at [leaves_, 2 * leaves_)
  // A node whose room grew (Release) while the tree still holds its room
  // from before: the tree never overstates it, so FirstFit weighs it beside
  // the tree's answer. On a full cluster with tasks waiting, a freed node is
  // refilled at once, and both climbs to the root are saved.
  static constexpr size_t kNoNode = SIZE_MAX;
  size_t stale_ = kNoNode;
  void SyncStale();  // brings the tree up to date with stale_'s room
  size_t leaves_ = 0;
  void SetFree(size_t i, const ResourceList& room);  // free_[i] = room, and the tree above it
  size_t TreeFirstFit(const Demand& d) const;        // by the tree alone (see stale_)
  void RebuildRoom();
  size_t FirstFit(const Demand& d) const;  // nodes_.size() when none fits
  std::deque<Entry> queue_;
  size_t queued_ = 0;  // entries of queue_ still queued
  void DropGaps();
  std::vector<Demand> failed_;  // Schedule's, kept to reuse its memory
};

}  // namespace kfpbench::engine
