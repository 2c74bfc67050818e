// An enum's names kept as one table of (value, name) pairs, so that naming a
// value and parsing a name read the same list and cannot disagree.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace kfpbench {

template <typename E>
using EnumName = std::pair<E, std::string_view>;

// The name `names` gives `value`, or `otherwise` for a value it does not list.
template <typename E, size_t N>
constexpr std::string_view NameIn(const EnumName<E> (&names)[N], E value,
                                  std::string_view otherwise) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return otherwise;
}

// The value `names` calls `name`, or nullopt.
template <typename E, size_t N>
constexpr std::optional<E> ValueIn(const EnumName<E> (&names)[N], std::string_view name) {
  for (const auto& [v, n] : names) {
    if (n == name) return v;
  }
  return std::nullopt;
}

}  // namespace kfpbench
