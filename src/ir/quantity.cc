// Kubernetes resource quantities and protobuf durations.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "ir/pipeline_spec.h"

namespace kfpbench::ir {
namespace {

struct Suffix {
  std::string_view text;
  double factor;
};

// Binary suffixes first so that "Mi" is not read as "M" + "i".
constexpr Suffix kSuffixes[] = {
    {"Ki", 1024.0},
    {"Mi", 1024.0 * 1024},
    {"Gi", 1024.0 * 1024 * 1024},
    {"Ti", 1024.0 * 1024 * 1024 * 1024},
    {"Pi", 1024.0 * 1024 * 1024 * 1024 * 1024},
    {"Ei", 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024},
    {"n", 1e-9},
    {"u", 1e-6},
    {"m", 1e-3},
    {"k", 1e3},
    {"K", 1e3},  // not Kubernetes, but people write it
    {"M", 1e6},
    {"G", 1e9},
    {"T", 1e12},
    {"P", 1e15},
    {"E", 1e18},
};

Result<double> ParseQuantity(std::string_view text, std::string_view what) {
  std::string s(text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(0, 1);
  if (s.empty()) return Error{fmt::format("empty {} quantity", what), 400};
  const char* begin = s.c_str();
  char* end = nullptr;
  errno = 0;
  double number = std::strtod(begin, &end);
  if (end == begin || errno == ERANGE || !std::isfinite(number) || number < 0) {
    return Error{fmt::format("invalid {} quantity '{}'", what, text), 400};
  }
  std::string_view rest(end);
  if (rest.empty()) return number;
  for (const auto& suffix : kSuffixes) {
    if (rest == suffix.text) return number * suffix.factor;
  }
  return Error{fmt::format("invalid {} quantity '{}': unknown suffix '{}'", what, text, rest), 400};
}

}  // namespace

Result<double> ParseQuantityCpu(std::string_view text) { return ParseQuantity(text, "CPU"); }

Result<int64_t> ParseQuantityMemory(std::string_view text) {
  auto q = ParseQuantity(text, "memory");
  if (!q.ok()) return q.error();
  if (*q > 9.2e18) return Error{fmt::format("memory quantity '{}' is too large", text), 400};
  // Kubernetes rounds fractional bytes up.
  return static_cast<int64_t>(std::ceil(*q));
}

Result<Duration> ParseProtoDuration(std::string_view text) {
  std::string s(text);
  if (s.size() < 2 || s.back() != 's') {
    return Error{fmt::format("invalid duration '{}': want seconds like \"30s\"", text), 400};
  }
  s.pop_back();
  char* end = nullptr;
  errno = 0;
  double seconds = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(seconds) || seconds < 0) {
    return Error{fmt::format("invalid duration '{}'", text), 400};
  }
  return FromSeconds(seconds);
}

}  // namespace kfpbench::ir
