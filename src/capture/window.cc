#include "capture/window.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kfpbench::capture {

Result<WallTime> ParseWindowPoint(std::string_view text, WallTime now) {
  if (auto t = ParseRfc3339(text); t.ok()) return *t;
  if (auto d = ParseDuration(text); d.ok()) {
    if (*d < Duration::zero())
      return Error{fmt::format("'{}': a duration back must not be negative", text)};
    return now - std::chrono::duration_cast<WallClock::duration>(*d);
  }
  return Error{fmt::format(
      "'{}' is neither an RFC 3339 time (2026-11-20T00:00:00Z) nor a duration back from now (24h)",
      text)};
}

std::string CreatedAtFilter(WallTime since, WallTime until) {
  auto predicate = [](const char* operation, WallTime t) {
    return nlohmann::json{
        {"key", "created_at"}, {"operation", operation}, {"timestamp_value", FormatRfc3339(t)}};
  };
  nlohmann::json filter = {
      {"predicates", nlohmann::json::array({predicate("GREATER_THAN_EQUALS", since),
                                            predicate("LESS_THAN", until)})}};
  return filter.dump();
}

}  // namespace kfpbench::capture
