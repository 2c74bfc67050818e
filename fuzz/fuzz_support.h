// libFuzzer targets: each feeds arbitrary bytes to one parser of outside
// input. A target fails on a crash, a sanitizer report, a leak or a timeout;
// a parser that answers an Error is doing its job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kfpbench::fuzz {

inline std::string_view Text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The input as JSON, or discarded (never an exception).
inline nlohmann::json Json(const uint8_t* data, size_t size) {
  return nlohmann::json::parse(Text(data, size), nullptr, /*allow_exceptions=*/false);
}

// Splits the input at its first newline: two fields for parsers that take two.
inline std::pair<std::string_view, std::string_view> TwoParts(const uint8_t* data, size_t size) {
  std::string_view text = Text(data, size);
  size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return {text, {}};
  return {text.substr(0, nl), text.substr(nl + 1)};
}

}  // namespace kfpbench::fuzz
