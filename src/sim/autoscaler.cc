#include "sim/autoscaler.h"

#include <algorithm>

#include <fmt/format.h>

namespace kfpbench::sim {

Nodes::Nodes(engine::EventLoop& loop, engine::Engine& engine, const ClusterSpec& cluster)
    : loop_(loop),
      engine_(engine),
      cluster_(cluster),
      live_(cluster.pools.size(), 0),
      serial_(cluster.pools.size(), 0),
      last_change_(loop.Now()) {
  for (const auto& p : cluster.pools) {
    pool_capacity_.push_back(p.Node(p.name).allocatable);
    any_beyond_ = any_beyond_ || pool_capacity_.back().AnyBeyondCpuAndMemory();
  }
}

void Nodes::Account() {
  WallTime now = loop_.Now();
  const double dt = ToSeconds(now - last_change_);
  node_seconds_ += dt * live_total_;
  cpu_seconds_ += dt * CpuCapacity();
  memory_seconds_ += dt * MemoryCapacity();
  if (any_beyond_) {
    for (size_t slot = engine::kMemory + 1; slot < engine::kResourceSlots; ++slot) {
      beyond_seconds_[slot] += dt * BeyondCapacity(slot);
    }
  }
  last_change_ = now;
}

void Nodes::Add(size_t pool) {
  Account();
  const NodePool& p = cluster_.pools[pool];
  size_t index = engine_.AddNode(p.Node(fmt::format("{}-{}", p.name, serial_[pool]++)));
  if (pool_of_.size() <= index) pool_of_.resize(index + 1, -1);
  pool_of_[index] = static_cast<int>(pool);
  ++live_[pool];
  ++live_total_;
  peak_ = std::max(peak_, live_total_);
}

bool Nodes::Remove(size_t index) {
  int pool = pool_of(index);
  if (pool < 0 || !engine_.RemoveNode(index)) return false;
  Account();
  pool_of_[index] = -1;
  --live_[pool];
  --live_total_;
  return true;
}

int Nodes::pool_of(size_t index) const { return index < pool_of_.size() ? pool_of_[index] : -1; }

double Nodes::NodeSeconds(WallTime t) const {
  return node_seconds_ + ToSeconds(t - last_change_) * live_total_;
}

double Nodes::CpuSeconds(WallTime t) const {
  return cpu_seconds_ + ToSeconds(t - last_change_) * CpuCapacity();
}

double Nodes::MemorySeconds(WallTime t) const {
  return memory_seconds_ + ToSeconds(t - last_change_) * MemoryCapacity();
}

double Nodes::MemoryCapacity() const {
  double memory = 0;
  for (size_t i = 0; i < live_.size(); ++i) {
    memory += live_[i] * static_cast<double>(cluster_.pools[i].memory);
  }
  return memory;
}

double Nodes::BeyondCapacity(size_t slot) const {
  double total = 0;
  for (size_t i = 0; i < live_.size(); ++i) {
    total += live_[i] * static_cast<double>(pool_capacity_[i][slot]);
  }
  return total;
}

double Nodes::CapacitySeconds(size_t slot, WallTime t) const {
  if (!any_beyond_) return 0;
  return beyond_seconds_[slot] + ToSeconds(t - last_change_) * BeyondCapacity(slot);
}

double Nodes::CpuCapacity() const {
  double cpu = 0;
  for (size_t i = 0; i < live_.size(); ++i) cpu += live_[i] * cluster_.pools[i].cpu;
  return cpu;
}

Autoscaler::Autoscaler(engine::EventLoop& loop, engine::Engine& engine, const ClusterSpec& cluster,
                       Nodes& nodes)
    : loop_(loop),
      engine_(engine),
      cluster_(cluster),
      nodes_(nodes),
      provisioning_(cluster.pools.size(), 0) {}

void Autoscaler::Scan() {
  if (!cluster_.autoscaler.enabled) return;
  ScaleUp();
  ScaleDown();
}

void Autoscaler::ScaleUp() {
  const engine::Placement& placement = engine_.placement();
  if (placement.queued() == 0) return;
  // Pack the waiting tasks onto imaginary new nodes, next fit, the nodes
  // already on their way first: how many more would let all of them run.
  // Next fit (a bin once passed over is closed) keeps a scan linear in the
  // queue; it over-counts a little against first fit with mixed demands.
  struct Bin {
    size_t pool;
    engine::ResourceList free;
  };
  // A pool's labels, taints and resources decide which waiting tasks its
  // nodes would take.
  std::vector<engine::NodeSpec> shapes;
  for (const auto& pool : cluster_.pools) shapes.push_back(pool.Node(pool.name));
  std::vector<Bin> bins;
  std::vector<int> headroom(cluster_.pools.size());
  for (size_t p = 0; p < cluster_.pools.size(); ++p) {
    for (int i = 0; i < provisioning_[p]; ++i) bins.push_back({p, shapes[p].allocatable});
    headroom[p] = cluster_.pools[p].max - nodes_.live(p) - provisioning_[p];
  }
  std::vector<int> wanted(cluster_.pools.size(), 0);
  int total_headroom = 0;
  for (int h : headroom) total_headroom += std::max(h, 0);
  size_t open = 0;  // bins before it are closed
  placement.ForEachQueued([&](const engine::Demand& d) {
    for (size_t b = open; b < bins.size(); ++b) {
      if (d.amounts.FitsIn(bins[b].free) &&
          engine::Schedulable(shapes[bins[b].pool], d.scheduling)) {
        bins[b].free -= d.amounts;
        return true;
      }
      open = b + 1;
    }
    // Every bin closed and no pool may grow: the rest of a long queue can
    // change nothing, so stop here.
    if (total_headroom == 0) return false;
    for (size_t p = 0; p < cluster_.pools.size(); ++p) {
      const engine::ResourceList& cap = shapes[p].allocatable;
      if (headroom[p] <= 0 || !d.amounts.FitsIn(cap) ||
          !engine::Schedulable(shapes[p], d.scheduling)) {
        continue;
      }
      --headroom[p];
      --total_headroom;
      ++wanted[p];
      bins.push_back({p, cap - d.amounts});
      open = bins.size() - 1;
      return true;
    }
    // Fits no pool with headroom: it waits for room on the nodes there are.
    return true;
  });
  for (size_t p = 0; p < wanted.size(); ++p) {
    for (int i = 0; i < wanted[p]; ++i) {
      ++provisioning_[p];
      ++provisioning_total_;
      peak_requested_ = std::max(peak_requested_, nodes_.live_total() + provisioning_total_);
      loop_.After(cluster_.autoscaler.provisioning_delay, [this, p] {
        --provisioning_[p];
        --provisioning_total_;
        nodes_.Add(p);
      });
    }
  }
}

void Autoscaler::ScaleDown() {
  const engine::Placement& placement = engine_.placement();
  WallTime now = loop_.Now();
  if (idle_since_.size() < placement.node_count()) {
    idle_since_.resize(placement.node_count(), WallTime::max());
  }
  // Not while tasks wait: an empty node then is about to be used. Scans
  // while tasks keep waiting would find every node marked busy already.
  bool waiting = placement.queued() > 0;
  if (waiting && all_busy_) return;
  all_busy_ = waiting;
  for (size_t i = 0; i < placement.node_count(); ++i) {
    int pool = nodes_.pool_of(i);
    if (pool < 0) continue;
    if (placement.used(i) != engine::ResourceList{} || waiting) {
      idle_since_[i] = WallTime::max();
      continue;
    }
    if (idle_since_[i] == WallTime::max()) idle_since_[i] = now;
    if (now - idle_since_[i] >= cluster_.autoscaler.scale_down_idle &&
        nodes_.live(static_cast<size_t>(pool)) > cluster_.pools[pool].min) {
      if (nodes_.Remove(i)) idle_since_[i] = WallTime::max();
    }
  }
}

}  // namespace kfpbench::sim
