#include "exec/quantity.h"

#include <cmath>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

namespace kfpbench::exec {
namespace {

// Splits "1.5Gi" into its number and its suffix; the number must be a plain
// non-negative decimal (no sign, no exponent) so that "1e3" or "-1" are
// rejected rather than half-understood.
bool SplitNumber(std::string_view text, double* number, std::string_view* suffix) {
  size_t pos = 0;
  bool digits = false;
  while (pos < text.size() && ((text[pos] >= '0' && text[pos] <= '9') || text[pos] == '.')) {
    digits |= text[pos] != '.';
    ++pos;
  }
  if (!digits) return false;
  std::string num(text.substr(0, pos));
  char* end = nullptr;
  *number = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size() || !std::isfinite(*number)) return false;
  *suffix = text.substr(pos);
  return true;
}

}  // namespace

Result<int64_t> ParseBytes(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Error{fmt::format("invalid byte quantity '{}': {}", text, why)};
  };
  double number = 0;
  std::string_view suffix;
  if (!SplitNumber(text, &number, &suffix)) return bad("expected e.g. 256Mi, 1G or 1048576");
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"", 1},
      {"Ki", 1024.0},
      {"Mi", 1024.0 * 1024},
      {"Gi", 1024.0 * 1024 * 1024},
      {"Ti", 1024.0 * 1024 * 1024 * 1024},
      {"Pi", 1024.0 * 1024 * 1024 * 1024 * 1024},
      {"Ei", 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024},
      {"k", 1e3},
      {"K", 1e3},
      {"M", 1e6},
      {"G", 1e9},
      {"T", 1e12},
      {"P", 1e15},
      {"E", 1e18},
  };
  for (const auto& [unit, scale] : kUnits) {
    if (unit != suffix) continue;
    double bytes = std::round(number * scale);
    // 2^63 is exactly representable; anything at or above it overflows int64.
    if (bytes >= 9223372036854775808.0) return bad("too large");
    return static_cast<int64_t>(bytes);
  }
  return bad(fmt::format("unknown suffix '{}' (use Ki, Mi, Gi, Ti, K, M, G or T)", suffix));
}

std::string FormatBytes(int64_t bytes) {
  static constexpr std::string_view kUnits[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};
  if (bytes > 0) {
    for (int i = 0; i < 6; ++i) {
      int64_t scale = int64_t{1} << (10 * (6 - i));
      if (bytes % scale == 0) return fmt::format("{}{}", bytes / scale, kUnits[i]);
    }
  }
  return std::to_string(bytes);
}

Result<double> ParseCpu(std::string_view text) {
  double number = 0;
  std::string_view suffix;
  if (SplitNumber(text, &number, &suffix)) {
    if (suffix.empty()) return number;
    if (suffix == "m") return number / 1000;
  }
  return Error{fmt::format("invalid CPU quantity '{}' (expected e.g. 0.5, 2 or 500m)", text)};
}

}  // namespace kfpbench::exec
