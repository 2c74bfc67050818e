#include "engine/placement.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kfpbench::engine {
namespace {

int64_t Millis(double cores) { return static_cast<int64_t>(std::llround(cores * 1000)); }

std::string FormatBytes(int64_t bytes) {
  constexpr double kGi = 1024.0 * 1024 * 1024;
  constexpr double kMi = 1024.0 * 1024;
  if (bytes >= kGi) return fmt::format("{:g}Gi", std::round(bytes / kGi * 100) / 100);
  if (bytes >= kMi) return fmt::format("{:g}Mi", std::round(bytes / kMi * 100) / 100);
  return fmt::format("{}B", bytes);
}

}  // namespace

Demand DemandOf(const Resources& task, const Resources& fallback) {
  auto pick = [](double a, double b, double c, double d) {
    for (double v : {a, b, c, d}) {
      if (v > 0) return v;
    }
    return 0.0;
  };
  Demand d;
  d.cpu_millis =
      Millis(pick(task.cpu_request, task.cpu_limit, fallback.cpu_request, fallback.cpu_limit));
  d.memory = static_cast<int64_t>(pick(
      static_cast<double>(task.memory_request), static_cast<double>(task.memory_limit),
      static_cast<double>(fallback.memory_request), static_cast<double>(fallback.memory_limit)));
  // Never zero: Placement::Schedule stops scanning once no node has any room.
  d.cpu_millis = std::max<int64_t>(d.cpu_millis, 1);
  d.memory = std::max<int64_t>(d.memory, 1);
  return d;
}

std::vector<NodeSpec> DefaultNodes() {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  NodeSpec node;
  node.name = "local";
  node.cpu = cores > 0 ? static_cast<double>(cores) : 1.0;
  node.memory =
      pages > 0 && page_size > 0 ? static_cast<int64_t>(pages) * page_size : int64_t{4} << 30;
  return {node};
}

std::string DescribeDemand(const Demand& d) {
  return fmt::format("{:g} CPU, {} memory", d.cpu_millis / 1000.0, FormatBytes(d.memory));
}

Placement::Placement(std::vector<NodeSpec> nodes) : nodes_(std::move(nodes)) {
  for (const auto& n : nodes_) {
    capacity_.push_back({Millis(n.cpu), n.memory});
  }
  free_ = capacity_;
}

bool Placement::FitsSomeNode(const Demand& d) const {
  for (const auto& c : capacity_) {
    if (d.cpu_millis <= c.cpu_millis && d.memory <= c.memory) return true;
  }
  return false;
}

Demand Placement::LargestNode() const {
  Demand best;
  for (const auto& c : capacity_) {
    if (c.cpu_millis > best.cpu_millis ||
        (c.cpu_millis == best.cpu_millis && c.memory > best.memory)) {
      best = c;
    }
  }
  return best;
}

void Placement::Enqueue(Ticket ticket, const Demand& d) {
  queue_.push_back({ticket, d});
  index_[ticket] = std::prev(queue_.end());
}

bool Placement::Remove(Ticket ticket) {
  auto it = index_.find(ticket);
  if (it == index_.end()) return false;
  queue_.erase(it->second);
  index_.erase(it);
  return true;
}

std::vector<Placement::Placed> Placement::Schedule() {
  std::vector<Placed> placed;
  for (auto it = queue_.begin(); it != queue_.end();) {
    // Nothing more can fit once every node is full; saves scanning a long queue.
    bool room = false;
    for (const auto& f : free_) room = room || (f.cpu_millis > 0 && f.memory > 0);
    if (!room) break;
    const Demand& d = it->demand;
    size_t chosen = nodes_.size();
    for (size_t n = 0; n < free_.size(); ++n) {
      if (d.cpu_millis <= free_[n].cpu_millis && d.memory <= free_[n].memory) {
        chosen = n;
        break;
      }
    }
    if (chosen == nodes_.size()) {
      ++it;
      continue;
    }
    free_[chosen].cpu_millis -= d.cpu_millis;
    free_[chosen].memory -= d.memory;
    placed.push_back({it->ticket, chosen});
    index_.erase(it->ticket);
    it = queue_.erase(it);
  }
  return placed;
}

void Placement::Release(size_t node, const Demand& d) {
  free_[node].cpu_millis += d.cpu_millis;
  free_[node].memory += d.memory;
}

}  // namespace kfpbench::engine
