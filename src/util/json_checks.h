// Validators for JsonReader::Field: each reads one JSON value into its type,
// checks it, and returns the problem in the words the user sees ("must be a
// whole number from 1 to 100000 (got 0)"), or "" when the value is good.
// The reader puts the field's path in front. A part's own checks (a
// scenario's times, harness/scenario.h) are written the same way beside it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kfpbench::checks {

// An integer from `low` to `high`.
struct WholeNumber {
  int64_t low;
  int64_t high;
  template <typename T>
  std::string operator()(const nlohmann::json& v, T& out) const {
    static_assert(std::is_integral_v<T>);
    // A parsed integer above int64's range is unsigned; get<int64_t> wraps it.
    const bool in_range =
        v.is_number_integer() && v.get<int64_t>() >= low && v.get<int64_t>() <= high &&
        !(v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(high));
    if (!in_range) {
      return fmt::format("must be a whole number from {} to {} (got {})", low, high, v.dump());
    }
    out = static_cast<T>(v.get<int64_t>());
    return {};
  }
};

// A number above `low` (or from it, when not `low_open`) and at most
// `high`; `what` says what it must be ("must be runs per minute, greater
// than zero"), the value given follows.
struct Number {
  double low;
  double high;
  std::string_view what;
  bool low_open = true;
  std::string operator()(const nlohmann::json& v, double& out) const {
    const bool in_range = v.is_number() &&
                          (low_open ? v.get<double>() > low : v.get<double>() >= low) &&
                          v.get<double>() <= high;
    if (!in_range) return fmt::format("{} (got {})", what, v.dump());
    out = v.get<double>();
    return {};
  }
};

// A string that is not empty; `what` is the message otherwise.
struct NonEmptyString {
  std::string_view what;
  std::string operator()(const nlohmann::json& v, std::string& out) const {
    if (!v.is_string() || v.get_ref<const std::string&>().empty()) return std::string(what);
    out = v.get<std::string>();
    return {};
  }
};

// A JSON object, kept as it is; `what` is the message otherwise.
struct JsonObject {
  std::string_view what;
  bool non_empty = false;
  std::string operator()(const nlohmann::json& v, nlohmann::json& out) const {
    if (!v.is_object() || (non_empty && v.empty())) return std::string(what);
    out = v;
    return {};
  }
};

// One of a few names, each standing for a value of T:
// `must be "constant" or "poisson" (got "bursty")`.
template <typename T>
struct OneOf {
  std::vector<std::pair<std::string_view, T>> choices;
  std::string operator()(const nlohmann::json& v, T& out) const {
    for (const auto& [name, value] : choices) {
      if (v.is_string() && v.get_ref<const std::string&>() == name) {
        out = value;
        return {};
      }
    }
    std::string names;
    for (size_t i = 0; i < choices.size(); ++i) {
      if (i > 0) names += i + 1 == choices.size() ? " or " : ", ";
      names += fmt::format("\"{}\"", choices[i].first);
    }
    return fmt::format("must be {} (got {})", names, v.dump());
  }
};

}  // namespace kfpbench::checks
