#include "engine/placement.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace kfpbench::engine {
namespace {

int64_t Millis(double cores) { return static_cast<int64_t>(std::llround(cores * 1000)); }

bool Tolerates(const ir::Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (t.key.empty()) return t.op == "Exists";  // an empty key with Exists tolerates all
  if (t.key != taint.key) return false;
  return t.op == "Exists" || t.value == taint.value;
}

bool Matches(const ir::SelectorRequirement& r, const NodeSpec& node) {
  const std::string* value = nullptr;
  if (r.key == "metadata.name") {
    value = &node.name;
  } else if (auto it = node.labels.find(r.key); it != node.labels.end()) {
    value = &it->second;
  }
  auto in = [&] {
    return value != nullptr &&
           std::find(r.values.begin(), r.values.end(), *value) != r.values.end();
  };
  auto compare = [&](bool greater) {
    // Gt/Lt: one integer value, compared with the label's as integers.
    if (value == nullptr || r.values.size() != 1) return false;
    char* end = nullptr;
    long long label = std::strtoll(value->c_str(), &end, 10);
    if (value->empty() || *end != '\0') return false;
    long long bound = std::strtoll(r.values[0].c_str(), &end, 10);
    if (r.values[0].empty() || *end != '\0') return false;
    return greater ? label > bound : label < bound;
  };
  if (r.op == "In") return in();
  if (r.op == "NotIn") return !in();
  if (r.op == "Exists") return value != nullptr;
  if (r.op == "DoesNotExist") return value == nullptr;
  if (r.op == "Gt") return compare(true);
  if (r.op == "Lt") return compare(false);
  return false;
}

bool Untolerated(const NodeSpec& node, const ir::NodeScheduling* s) {
  for (const auto& taint : node.taints) {
    if (taint.effect == "PreferNoSchedule") continue;
    bool tolerated = false;
    if (s != nullptr) {
      for (const auto& t : s->tolerations) tolerated = tolerated || Tolerates(t, taint);
    }
    if (!tolerated) return true;
  }
  return false;
}

bool SelectorMismatch(const NodeSpec& node, const ir::NodeScheduling* s) {
  if (s == nullptr) return false;
  for (const auto& [key, value] : s->node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return true;
  }
  if (s->required_terms.empty()) return false;
  for (const auto& term : s->required_terms) {
    bool all = true;
    for (const auto& r : term) all = all && Matches(r, node);
    if (all) return false;
  }
  return true;
}

}  // namespace

bool Schedulable(const NodeSpec& node, const ir::NodeScheduling* scheduling) {
  return !Untolerated(node, scheduling) && !SelectorMismatch(node, scheduling);
}

Resources ResourcesOf(const ir::ResourceSpec& r) {
  Resources out{r.cpu_request, r.cpu_limit, r.memory_request, r.memory_limit, {}};
  if (!r.accelerator_type.empty() && r.accelerator_count > 0) {
    out.extended.push_back({r.accelerator_type, r.accelerator_count});
  }
  return out;
}

Demand DemandOf(const Resources& task, const Resources& fallback) {
  auto pick = [](double a, double b, double c, double d) {
    for (double v : {a, b, c, d}) {
      if (v > 0) return v;
    }
    return 0.0;
  };
  Demand d;
  d.amounts[kCpu] =
      Millis(pick(task.cpu_request, task.cpu_limit, fallback.cpu_request, fallback.cpu_limit));
  d.amounts[kMemory] = static_cast<int64_t>(pick(
      static_cast<double>(task.memory_request), static_cast<double>(task.memory_limit),
      static_cast<double>(fallback.memory_request), static_cast<double>(fallback.memory_limit)));
  // Never zero: Placement::Schedule stops scanning once no node has any room.
  d.amounts[kCpu] = std::max<int64_t>(d.amounts[kCpu], 1);
  d.amounts[kMemory] = std::max<int64_t>(d.amounts[kMemory], 1);
  for (const auto& e : task.extended) {
    // A name past the slots goes to the untracked slot, which no node
    // offers: the task fits nowhere and says so, never asks for less.
    d.amounts[SlotOf(e.name).value_or(kUntracked)] += e.amount;
  }
  return d;
}

std::vector<NodeSpec> DefaultNodes() {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  return {NodeSpec(
      "local", cores > 0 ? static_cast<double>(cores) : 1.0,
      pages > 0 && page_size > 0 ? static_cast<int64_t>(pages) * page_size : int64_t{4} << 30)};
}

std::string DescribeDemand(const Demand& d) { return DescribeResources(d.amounts); }

Placement::Placement(std::vector<NodeSpec> nodes) : nodes_(std::move(nodes)) {
  for (const auto& n : nodes_) {
    capacity_.push_back(n.allocatable);
    any_taints_ = any_taints_ || !n.taints.empty();
  }
  free_ = capacity_;
  removed_.assign(nodes_.size(), false);
  for (size_t i = 0; i < nodes_.size(); ++i) nodes_with_room_ += HasRoom(i) ? 1 : 0;
  RebuildRoom();
}

void Placement::RebuildRoom() {
  leaves_ = 1;
  while (leaves_ < nodes_.size()) leaves_ *= 2;
  room_.assign(2 * leaves_, Room{-1, -1});  // padding fits nothing, not even zero
  for (size_t i = 0; i < free_.size(); ++i)
    room_[leaves_ + i] = {free_[i][kCpu], free_[i][kMemory]};
  for (size_t k = leaves_ - 1; k >= 1; --k) {
    room_[k] = {std::max(room_[2 * k].cpu_millis, room_[2 * k + 1].cpu_millis),
                std::max(room_[2 * k].memory, room_[2 * k + 1].memory)};
  }
  stale_ = kNoNode;
}

void Placement::SyncStale() {
  if (stale_ == kNoNode) return;
  size_t i = stale_;
  stale_ = kNoNode;
  SetFree(i, free_[i]);
}

void Placement::SetFree(size_t i, const ResourceList& room) {
  free_[i] = room;
  size_t k = leaves_ + i;
  if (i == stale_) {
    stale_ = kNoNode;
    // Back to the room the tree holds: nothing to climb.
    if (room_[k].cpu_millis == room[kCpu] && room_[k].memory == room[kMemory]) return;
  }
  room_[k] = {room[kCpu], room[kMemory]};
  for (k /= 2; k >= 1; k /= 2) {
    const Room most{std::max(room_[2 * k].cpu_millis, room_[2 * k + 1].cpu_millis),
                    std::max(room_[2 * k].memory, room_[2 * k + 1].memory)};
    // An unchanged range leaves every range above it unchanged: most
    // placements stop a level or two up instead of at the root.
    if (most.cpu_millis == room_[k].cpu_millis && most.memory == room_[k].memory) return;
    room_[k] = most;
  }
}

size_t Placement::FirstFit(const Demand& d) const {
  if (d.scheduling != nullptr || any_taints_ || d.amounts.AnyBeyondCpuAndMemory()) {
    // Rules, or resources the tree does not index, make its room no guide:
    // test each node in order.
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!removed_[i] && d.amounts.FitsIn(free_[i]) && Eligible(i, d)) return i;
    }
    return nodes_.size();
  }
  const size_t found = TreeFirstFit(d);
  if (stale_ < found && d.cpu_millis() <= free_[stale_][kCpu] &&
      d.memory() <= free_[stale_][kMemory]) {
    return stale_;
  }
  return found;
}

size_t Placement::TreeFirstFit(const Demand& d) const {
  auto fits = [&](size_t k) {
    return d.cpu_millis() <= room_[k].cpu_millis && d.memory() <= room_[k].memory;
  };
  if (nodes_.empty() || !fits(1)) return nodes_.size();
  // Depth first, left before right: the leftmost leaf that fits. A range
  // whose largest CPU and largest memory both fit may still hold no single
  // node that fits (they can be on different nodes), hence the backtracking.
  size_t k = 1;
  while (true) {
    if (k >= leaves_) return k - leaves_;  // a leaf that fits
    if (fits(2 * k)) {
      k = 2 * k;
      continue;
    }
    if (fits(2 * k + 1)) {
      k = 2 * k + 1;
      continue;
    }
    // Dead end: climb to the nearest ancestor entered from the left whose
    // right sibling fits.
    while (true) {
      if (k == 1) return nodes_.size();
      bool left_child = k % 2 == 0;
      k /= 2;
      if (left_child && fits(2 * k + 1)) {
        k = 2 * k + 1;
        break;
      }
    }
  }
}

bool Placement::FitsSomeNode(const Demand& d) const {
  for (size_t i = 0; i < capacity_.size(); ++i) {
    if (d.amounts.FitsIn(capacity_[i]) && Eligible(i, d)) return true;
  }
  for (size_t i = 0; i < shapes_.size(); ++i) {
    if (d.amounts.FitsIn(shapes_[i]) && Schedulable(shape_nodes_[i], d.scheduling)) return true;
  }
  return false;
}

std::string Placement::WhyUnschedulable(const Demand& d) const {
  if (FitsSomeNode(d)) return "";
  // Every node and every shape a pool may add, as kube-scheduler counts them.
  std::vector<std::pair<const NodeSpec*, ResourceList>> all;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!removed_[i]) all.emplace_back(&nodes_[i], capacity_[i]);
  }
  for (size_t i = 0; i < shapes_.size(); ++i) all.emplace_back(&shape_nodes_[i], shapes_[i]);
  int selector = 0, taint = 0, small = 0, extended = 0;
  for (const auto& [node, cap] : all) {
    if (SelectorMismatch(*node, d.scheduling)) {
      ++selector;
    } else if (Untolerated(*node, d.scheduling)) {
      ++taint;
    } else if (d.cpu_millis() > cap[kCpu] || d.memory() > cap[kMemory]) {
      ++small;
    } else if (!d.amounts.FitsIn(cap)) {
      ++extended;
    }
  }
  std::vector<std::string> reasons;
  if (selector > 0) {
    reasons.push_back(
        fmt::format("{} node(s) didn't match Pod's node affinity/selector", selector));
  }
  if (taint > 0) reasons.push_back(fmt::format("{} node(s) had untolerated taint", taint));
  if (small > 0) {
    reasons.push_back(
        fmt::format("{} node(s) had too little CPU or memory for {}", small, DescribeDemand(d)));
  }
  if (extended > 0) {
    // As kube-scheduler words a missing extended resource ("Insufficient nvidia.com/gpu").
    std::string names;
    for (size_t i = kMemory + 1; i < kResourceSlots; ++i) {
      if (d.amounts[i] == 0) continue;
      names +=
          (names.empty() ? "" : ", ") + (SlotName(i).empty() ? "unknown resource" : SlotName(i));
    }
    reasons.push_back(
        fmt::format("{} node(s) had insufficient {} for {}", extended, names, DescribeDemand(d)));
  }
  std::string out = fmt::format("0/{} nodes are available", all.size());
  for (size_t i = 0; i < reasons.size(); ++i) out += (i == 0 ? ": " : ", ") + reasons[i];
  return out;
}

ResourceList Placement::LargestNode() const {
  ResourceList best;
  std::vector<ResourceList> all = capacity_;
  all.insert(all.end(), shapes_.begin(), shapes_.end());
  for (const auto& c : all) {
    if (c[kCpu] > best[kCpu] || (c[kCpu] == best[kCpu] && c[kMemory] > best[kMemory])) best = c;
  }
  return best;
}

void Placement::Enqueue(Ticket ticket, const Demand& d) {
  queue_.push_back({ticket, d, true});
  ++queued_;
}

void Placement::DropGaps() {
  while (!queue_.empty() && !queue_.front().queued) queue_.pop_front();
  if (queue_.size() > 2 * queued_ + 64) {
    std::erase_if(queue_, [](const Entry& e) { return !e.queued; });
  }
}

bool Placement::Remove(Ticket ticket) {
  auto it = std::find_if(queue_.begin(), queue_.end(),
                         [&](const Entry& e) { return e.queued && e.ticket == ticket; });
  if (it == queue_.end()) return false;
  it->queued = false;
  --queued_;
  DropGaps();
  return true;
}

void Placement::Schedule(std::vector<Placed>& placed) {
  // Demands that found no node in this pass: free room only shrinks during a
  // pass, so a later ticket asking for at least as much cannot fit either.
  // With few distinct demands this skips most of a long queue cheaply.
  failed_.clear();
  for (auto& e : queue_) {
    // Nothing more can fit once every node is full; saves scanning a long queue.
    if (nodes_with_room_ == 0) break;
    if (!e.queued) continue;
    const Demand& d = e.demand;
    bool hopeless = false;
    for (const auto& f : failed_) {
      hopeless = hopeless || (d.scheduling == f.scheduling && f.amounts.FitsIn(d.amounts));
    }
    size_t chosen = hopeless ? nodes_.size() : FirstFit(d);
    if (chosen == nodes_.size()) {
      if (!hopeless) failed_.push_back(d);
      continue;
    }
    SetFree(chosen, free_[chosen] - d.amounts);
    used_total_ += d.amounts;
    if (!HasRoom(chosen)) --nodes_with_room_;
    placed.push_back({e.ticket, chosen});
    e.queued = false;
    --queued_;
  }
  DropGaps();
}

void Placement::Release(size_t node, const Demand& d) {
  bool had_room = HasRoom(node);
  // The tree keeps this node's smaller room until it is placed on again or
  // another node's room grows (see stale_).
  if (stale_ != node) SyncStale();
  stale_ = node;
  free_[node] += d.amounts;
  used_total_ -= d.amounts;
  if (!had_room && HasRoom(node)) ++nodes_with_room_;
}

size_t Placement::AddNode(const NodeSpec& node) {
  const ResourceList& cap = node.allocatable;
  any_taints_ = any_taints_ || !node.taints.empty();
  size_t i = first_removed_;
  while (i < nodes_.size() && !removed_[i]) ++i;
  first_removed_ = i + 1;
  if (i == nodes_.size()) {
    nodes_.push_back(node);
    capacity_.push_back(cap);
    free_.push_back(cap);
    removed_.push_back(false);
    if (nodes_.size() > leaves_) {
      RebuildRoom();
    } else {
      SetFree(i, cap);
    }
  } else {
    nodes_[i] = node;
    capacity_[i] = cap;
    SetFree(i, cap);
    removed_[i] = false;
  }
  if (HasRoom(i)) ++nodes_with_room_;
  return i;
}

bool Placement::RemoveNode(size_t i) {
  if (i >= nodes_.size() || removed_[i]) return false;
  if (free_[i] != capacity_[i]) return false;
  if (HasRoom(i)) --nodes_with_room_;
  // Zero capacity: first fit never picks it and FitsSomeNode ignores it.
  capacity_[i] = ResourceList{};
  SetFree(i, ResourceList{});
  removed_[i] = true;
  first_removed_ = std::min(first_removed_, i);
  return true;
}

void Placement::AllowShape(const NodeSpec& shape) {
  shapes_.push_back(shape.allocatable);
  shape_nodes_.push_back(shape);
  any_taints_ = any_taints_ || !shape.taints.empty();
}

}  // namespace kfpbench::engine
