// The cluster's nodes over time and a cluster autoscaler in the manner of
// Kubernetes' cluster-autoscaler: every scan it adds nodes for tasks that fit
// no node now (they arrive after a provisioning delay) and removes nodes that
// have been empty for an idle time, within each pool's min and max.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/engine.h"
#include "sim/model.h"

namespace kfpbench::sim {

// Live nodes per pool, and node-hours (and core- and byte-seconds of
// allocatable capacity) integrated exactly at every change.
class Nodes {
 public:
  Nodes(engine::EventLoop& loop, engine::Engine& engine, const ClusterSpec& cluster);

  void Add(size_t pool);
  // Removes an idle node; false if busy.
  bool Remove(size_t index);

  int live(size_t pool) const { return live_[pool]; }
  int live_total() const { return live_total_; }
  int peak() const { return peak_; }
  // Pool of engine node `index`; -1 for none/removed.
  int pool_of(size_t index) const;
  // Node-seconds up to `t`.
  double NodeSeconds(WallTime t) const;
  // Allocatable core-seconds and byte-seconds of live nodes up to `t`.
  double CpuSeconds(WallTime t) const;
  double MemorySeconds(WallTime t) const;
  double CpuCapacity() const;
  double MemoryCapacity() const;
  // Likewise for a resource beyond CPU and memory (an accelerator), in its
  // ResourceList unit: unit-seconds of live nodes up to `t`.
  double CapacitySeconds(size_t slot, WallTime t) const;

 private:
  void Account();
  engine::EventLoop& loop_;
  engine::Engine& engine_;
  const ClusterSpec& cluster_;
  std::vector<int> live_;
  std::vector<int> pool_of_;  // by engine node index
  std::vector<int> serial_;   // per pool, for node names
  int live_total_ = 0;
  int peak_ = 0;
  double node_seconds_ = 0;
  double cpu_seconds_ = 0;
  double memory_seconds_ = 0;
  std::array<double, engine::kResourceSlots> beyond_seconds_{};  // slots past memory
  std::vector<engine::ResourceList> pool_capacity_;              // a node's, by pool
  bool any_beyond_ = false;  // some pool offers more than CPU and memory
  double BeyondCapacity(size_t slot) const;
  WallTime last_change_;
};

class Autoscaler {
 public:
  Autoscaler(engine::EventLoop& loop, engine::Engine& engine, const ClusterSpec& cluster,
             Nodes& nodes);
  // One scan: scale up for unschedulable tasks, scale down idle nodes.
  void Scan();
  int provisioning() const { return provisioning_total_; }
  // The most nodes live or on their way at once so far: what was asked for,
  // whether or not it joined.
  int peak_requested() const { return peak_requested_; }

 private:
  void ScaleUp();
  void ScaleDown();
  engine::EventLoop& loop_;
  engine::Engine& engine_;
  const ClusterSpec& cluster_;
  Nodes& nodes_;
  std::vector<int> provisioning_;  // per pool
  int provisioning_total_ = 0;
  int peak_requested_ = 0;
  std::vector<WallTime> idle_since_;  // by engine node index; max() = busy
  bool all_busy_ = false;             // every idle_since_ is max(): tasks have been waiting
};

}  // namespace kfpbench::sim
