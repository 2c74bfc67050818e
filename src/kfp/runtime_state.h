// KFP's RuntimeState, shared by the API model, the engine and the harness.
#pragma once

#include <iterator>
#include <optional>
#include <string_view>

namespace kfpbench {

enum class RuntimeState {
  kUnspecified,
  kPending,
  kRunning,
  kSucceeded,
  kSkipped,
  kFailed,
  kCanceling,
  kCanceled,
  kPaused,
};

// The v2beta1 enum names by number, which is RuntimeState's order.
inline constexpr std::string_view kRuntimeStateNames[] = {"RUNTIME_STATE_UNSPECIFIED",
                                                          "PENDING",
                                                          "RUNNING",
                                                          "SUCCEEDED",
                                                          "SKIPPED",
                                                          "FAILED",
                                                          "CANCELING",
                                                          "CANCELED",
                                                          "PAUSED"};

// "PENDING", "SUCCEEDED", "RUNTIME_STATE_UNSPECIFIED"...
constexpr std::string_view RuntimeStateName(RuntimeState s) {
  auto number = static_cast<size_t>(s);
  return number < std::size(kRuntimeStateNames) ? kRuntimeStateNames[number]
                                                : kRuntimeStateNames[0];
}

constexpr std::optional<RuntimeState> ParseRuntimeState(std::string_view name) {
  for (size_t number = 0; number < std::size(kRuntimeStateNames); ++number) {
    if (kRuntimeStateNames[number] == name) return static_cast<RuntimeState>(number);
  }
  return std::nullopt;
}

// A run or task in one of these states will not change again.
constexpr bool IsTerminal(RuntimeState s) {
  return s == RuntimeState::kSucceeded || s == RuntimeState::kSkipped ||
         s == RuntimeState::kFailed || s == RuntimeState::kCanceled;
}

}  // namespace kfpbench
