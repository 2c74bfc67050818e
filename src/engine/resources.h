#pragma once

#include <cstdint>
#include <string>

namespace kfpbench::engine {

// CPU in cores, memory in bytes. 0 means "not set".
struct Resources {
  double cpu_request = 0;
  double cpu_limit = 0;
  int64_t memory_request = 0;
  int64_t memory_limit = 0;
};

struct NodeSpec {
  std::string name;
  double cpu = 0;      // allocatable cores
  int64_t memory = 0;  // allocatable bytes
};

}  // namespace kfpbench::engine
