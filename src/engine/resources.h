#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kfpbench::engine {

// CPU in cores, memory in bytes. 0 means "not set".
struct Resources {
  double cpu_request = 0;
  double cpu_limit = 0;
  int64_t memory_request = 0;
  int64_t memory_limit = 0;
};

// A Kubernetes node taint. Tasks land on a node with a NoSchedule or
// NoExecute taint only if they tolerate it; PreferNoSchedule only steers.
struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule or NoExecute
};

struct NodeSpec {
  NodeSpec() = default;
  NodeSpec(std::string name_, double cpu_, int64_t memory_)
      : name(std::move(name_)), cpu(cpu_), memory(memory_) {}

  std::string name;
  double cpu = 0;      // allocatable cores
  int64_t memory = 0;  // allocatable bytes
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
};

}  // namespace kfpbench::engine
