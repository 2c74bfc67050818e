#include "engine/resources.h"

#include <cmath>
#include <mutex>

#include <fmt/format.h>

namespace kfpbench::engine {
namespace {

// The standard resources by slot, as Kubernetes names them.
constexpr std::array<std::string_view, kStandardResources> kStandardNames = {"cpu", "memory",
                                                                             "ephemeral-storage"};

// Extended resources' names by slot, taken as they are first met: few
// (a cluster has a GPU type or two), and never given back, so a slot means
// the same resource for the life of the process.
struct ExtendedNames {
  std::mutex mu;
  std::array<std::string, kResourceSlots> names;
};

ExtendedNames& Extended() {
  static ExtendedNames names;
  return names;
}

std::string FormatBytes(int64_t bytes) {
  constexpr double kGi = 1024.0 * 1024 * 1024;
  constexpr double kMi = 1024.0 * 1024;
  if (bytes >= kGi) return fmt::format("{:g}Gi", std::round(bytes / kGi * 100) / 100);
  if (bytes >= kMi) return fmt::format("{:g}Mi", std::round(bytes / kMi * 100) / 100);
  return fmt::format("{}B", bytes);
}

}  // namespace

NodeSpec::NodeSpec(std::string name_, double cpu, int64_t memory)
    : name(std::move(name_)), allocatable(static_cast<int64_t>(std::llround(cpu * 1000)), memory) {}

std::optional<size_t> SlotOf(std::string_view name) {
  for (size_t i = 0; i < kStandardNames.size(); ++i) {
    if (kStandardNames[i] == name) return i;
  }
  ExtendedNames& e = Extended();
  std::lock_guard lock(e.mu);
  for (size_t i = kStandardResources; i < kUntracked; ++i) {
    if (e.names[i] == name) return i;
    if (e.names[i].empty()) {
      e.names[i] = std::string(name);
      return i;
    }
  }
  return std::nullopt;
}

std::string SlotName(size_t slot) {
  if (slot < kStandardNames.size()) return std::string(kStandardNames[slot]);
  if (slot == kUntracked) return "extended resources past the ones tracked";
  ExtendedNames& e = Extended();
  std::lock_guard lock(e.mu);
  return slot < kResourceSlots ? e.names[slot] : std::string();
}

bool AddNamed(ResourceList& list, const std::vector<NamedAmount>& amounts, std::string* unknown) {
  for (const auto& a : amounts) {
    std::optional<size_t> slot = SlotOf(a.name);
    if (!slot) {
      if (unknown != nullptr) *unknown = a.name;
      return false;
    }
    list[*slot] += a.amount;
  }
  return true;
}

std::string DescribeResources(const ResourceList& r) {
  std::string s = fmt::format("{:g} CPU, {} memory", static_cast<double>(r[kCpu]) / 1000.0,
                              FormatBytes(r[kMemory]));
  if (r[kEphemeralStorage] != 0) s += ", " + FormatBytes(r[kEphemeralStorage]) + " storage";
  for (size_t i = kStandardResources; i < kResourceSlots; ++i) {
    if (r[i] != 0) s += fmt::format(", {} {}", r[i], SlotName(i));
  }
  return s;
}

}  // namespace kfpbench::engine
