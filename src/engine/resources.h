// What tasks ask for and nodes offer: a list of resources, by the names
// Kubernetes gives them. Placement, the simulator and `plan` walk the list;
// none names a resource except where it is read in or shown.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kfpbench::engine {

// A resource's slot in a ResourceList. The standard resources have fixed
// slots, one line each in kStandardResources (resources.cc); extended
// resources (accelerators: "nvidia.com/gpu", or whatever a KFP accelerator
// type names) take the slots after them, interned by name the first time
// one is met.
enum ResourceSlot : size_t { kCpu, kMemory, kEphemeralStorage, kStandardResources };
inline constexpr size_t kResourceSlots = 7;
// The last slot holds what tasks ask of extended resources met after the
// others were taken; no node offers it, so such a task fits nowhere.
inline constexpr size_t kUntracked = kResourceSlots - 1;

// An amount of each resource: CPU in millicores, so that releasing exactly
// undoes placing; memory and storage in bytes; extended resources in units.
class ResourceList {
 public:
  ResourceList() = default;
  ResourceList(int64_t cpu_millis, int64_t memory) {
    amounts_[kCpu] = cpu_millis;
    amounts_[kMemory] = memory;
  }
  int64_t operator[](size_t slot) const { return amounts_[slot]; }
  int64_t& operator[](size_t slot) { return amounts_[slot]; }
  // Every amount at most room's.
  bool FitsIn(const ResourceList& room) const {
    for (size_t i = 0; i < kResourceSlots; ++i) {
      if (amounts_[i] > room.amounts_[i]) return false;
    }
    return true;
  }
  // Some amount beyond CPU and memory (storage, an accelerator) is nonzero.
  bool AnyBeyondCpuAndMemory() const {
    for (size_t i = kMemory + 1; i < kResourceSlots; ++i) {
      if (amounts_[i] != 0) return true;
    }
    return false;
  }
  ResourceList& operator+=(const ResourceList& o) {
    for (size_t i = 0; i < kResourceSlots; ++i) amounts_[i] += o.amounts_[i];
    return *this;
  }
  ResourceList& operator-=(const ResourceList& o) {
    for (size_t i = 0; i < kResourceSlots; ++i) amounts_[i] -= o.amounts_[i];
    return *this;
  }
  friend ResourceList operator-(ResourceList a, const ResourceList& b) { return a -= b; }
  friend ResourceList operator+(ResourceList a, const ResourceList& b) { return a += b; }
  bool operator==(const ResourceList&) const = default;

 private:
  std::array<int64_t, kResourceSlots> amounts_{};
};

// One resource by name, in its ResourceList unit.
struct NamedAmount {
  std::string name;
  int64_t amount = 0;  // extended resources and storage: units, bytes
};

// The slot of a resource name ("cpu", "memory", "ephemeral-storage", or an
// extended resource's, interned now if new); nullopt once every extended
// slot (kStandardResources up to kUntracked) is taken by other names.
// Thread-safe.
std::optional<size_t> SlotOf(std::string_view name);
// The name in `slot`; empty for an extended slot not yet taken.
std::string SlotName(size_t slot);
// Adds `amounts` to `list` by name; false (and `unknown` the name) when one
// has no slot left.
bool AddNamed(ResourceList& list, const std::vector<NamedAmount>& amounts,
              std::string* unknown = nullptr);
// "2 CPU, 1.5Gi memory", then every other nonzero amount ("1 nvidia.com/gpu").
std::string DescribeResources(const ResourceList& r);

// CPU in cores, memory in bytes. 0 means "not set". Extended resources
// (accelerators) have no request apart from their limit, as in Kubernetes:
// KFP sets `accelerator.resourceCount` as the limit of `resourceType`.
struct Resources {
  double cpu_request = 0;
  double cpu_limit = 0;
  int64_t memory_request = 0;
  int64_t memory_limit = 0;
  std::vector<NamedAmount> extended;  // "nvidia.com/gpu" -> 2
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
  NodeSpec(std::string name_, double cpu, int64_t memory);

  std::string name;
  ResourceList allocatable;
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
};

}  // namespace kfpbench::engine
