// KFP's RuntimeState, shared by the API model, the engine and the harness.
#pragma once

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

// The v2beta1 enum names: "PENDING", "SUCCEEDED", "RUNTIME_STATE_UNSPECIFIED"...
constexpr std::string_view RuntimeStateName(RuntimeState s) {
  switch (s) {
    case RuntimeState::kUnspecified:
      return "RUNTIME_STATE_UNSPECIFIED";
    case RuntimeState::kPending:
      return "PENDING";
    case RuntimeState::kRunning:
      return "RUNNING";
    case RuntimeState::kSucceeded:
      return "SUCCEEDED";
    case RuntimeState::kSkipped:
      return "SKIPPED";
    case RuntimeState::kFailed:
      return "FAILED";
    case RuntimeState::kCanceling:
      return "CANCELING";
    case RuntimeState::kCanceled:
      return "CANCELED";
    case RuntimeState::kPaused:
      return "PAUSED";
  }
  return "RUNTIME_STATE_UNSPECIFIED";
}

inline std::optional<RuntimeState> ParseRuntimeState(std::string_view name) {
  for (auto s : {RuntimeState::kUnspecified, RuntimeState::kPending, RuntimeState::kRunning,
                 RuntimeState::kSucceeded, RuntimeState::kSkipped, RuntimeState::kFailed,
                 RuntimeState::kCanceling, RuntimeState::kCanceled, RuntimeState::kPaused}) {
    if (RuntimeStateName(s) == name) return s;
  }
  return std::nullopt;
}

// A run or task in one of these states will not change again.
constexpr bool IsTerminal(RuntimeState s) {
  return s == RuntimeState::kSucceeded || s == RuntimeState::kSkipped ||
         s == RuntimeState::kFailed || s == RuntimeState::kCanceled;
}

}  // namespace kfpbench
