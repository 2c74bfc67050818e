// Bin-packing of tasks onto nodes, the way a Kubernetes scheduler sees it:
// each task asks for CPU and memory, nodes have fixed allocatable capacity,
// and a task that does not fit waits in a FIFO queue until one does.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/resources.h"

namespace kfpbench::engine {

// What a task occupies on its node. CPU is kept in millicores so that
// releasing exactly undoes placing.
struct Demand {
  int64_t cpu_millis = 0;
  int64_t memory = 0;
};

// The request if set, else the limit, else the fallback's request or limit.
Demand DemandOf(const Resources& task, const Resources& fallback);

// One node the size of this machine (online cores, physical memory).
std::vector<NodeSpec> DefaultNodes();

// "2 CPU, 1.5Gi memory"
std::string DescribeDemand(const Demand& d);

class Placement {
 public:
  using Ticket = uint64_t;
  struct Placed {
    Ticket ticket;
    size_t node;
  };

  explicit Placement(std::vector<NodeSpec> nodes);

  // Whether the demand fits an empty node; a task that never fits must not wait.
  bool FitsSomeNode(const Demand& d) const;
  // The largest node, for error messages.
  Demand LargestNode() const;

  void Enqueue(Ticket ticket, const Demand& d);
  // Drops a queued ticket; false when it is not queued.
  bool Remove(Ticket ticket);
  // Scans the queue in order and places, first fit over nodes, every ticket
  // that fits now. Placed tickets leave the queue and hold their demand until
  // Release.
  std::vector<Placed> Schedule();
  void Release(size_t node, const Demand& d);

  size_t queued() const { return queue_.size(); }
  const NodeSpec& node(size_t i) const { return nodes_[i]; }
  size_t node_count() const { return nodes_.size(); }
  Demand free(size_t i) const { return free_[i]; }

 private:
  struct Entry {
    Ticket ticket;
    Demand demand;
  };
  std::vector<NodeSpec> nodes_;
  std::vector<Demand> capacity_;
  std::vector<Demand> free_;
  std::list<Entry> queue_;
  std::unordered_map<Ticket, std::list<Entry>::iterator> index_;
};

}  // namespace kfpbench::engine
