// Kubernetes resource quantities (quantity.h) and protobuf durations.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "ir/pipeline_spec.h"
#include "ir/quantity.h"

namespace kfpbench::ir {
namespace {

struct Suffix {
  std::string_view text;
  double factor;
};

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

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads the grammar by hand rather than with strtod, which would also take
// spaces, signs, hex ("0x10"), "inf" and "nan".
Result<double> ParseQuantity(std::string_view text, std::string_view what) {
  auto bad = [&](std::string_view why) {
    return Error{fmt::format("invalid {} quantity '{}': {}", what, text, why), kHttpBadRequest};
  };
  if (text.empty()) return bad("empty");
  if (text[0] == '-') return bad("must not be negative");
  size_t pos = 0;
  bool digits = false, dot = false;
  while (pos < text.size() && (IsDigit(text[pos]) || text[pos] == '.')) {
    if (text[pos] == '.') {
      if (dot) return bad("more than one '.'");
      dot = true;
    } else {
      digits = true;
    }
    ++pos;
  }
  if (!digits) return bad("expected a number such as 500m, 0.5, 256Mi or 2G");
  std::string number(text.substr(0, pos));
  std::string_view rest = text.substr(pos);
  double factor = 1;
  if (!rest.empty() && (rest[0] == 'e' || rest[0] == 'E') && rest.size() > 1 &&
      (IsDigit(rest[1]) || rest[1] == '+' || rest[1] == '-')) {
    // A decimal exponent: e, an optional sign, digits, and nothing after.
    size_t e = 1;
    if (rest[e] == '+' || rest[e] == '-') ++e;
    size_t exp_digits = e;
    while (e < rest.size() && IsDigit(rest[e])) ++e;
    if (e == exp_digits || e != rest.size()) return bad("malformed exponent");
    number += rest;
    rest = {};
  } else if (!rest.empty()) {
    bool known = false;
    for (const auto& suffix : kSuffixes) {
      if (rest == suffix.text) {
        factor = suffix.factor;
        known = true;
        break;
      }
    }
    if (!known) {
      return bad(fmt::format("unknown suffix '{}' (use Ki, Mi, Gi, Ti, m, k, M, G or T)", rest));
    }
  }
  errno = 0;
  double value = std::strtod(number.c_str(), nullptr);
  if (errno == ERANGE || !std::isfinite(value * factor)) return bad("too large");
  return value * factor;
}

}  // namespace

Result<double> ParseQuantityCpu(std::string_view text) {
  auto cores = ParseQuantity(text, "CPU");
  if (!cores.ok()) return cores.error();
  // CPU is placed and summed in whole millicores (int64), as Kubernetes
  // keeps it: what cannot be one is no CPU at all, not a silent wrap.
  if (*cores * 1000 >= 9223372036854775808.0) {
    return Error{fmt::format("invalid CPU quantity '{}': too large", text), kHttpBadRequest};
  }
  return cores;
}

Result<int64_t> ParseQuantityMemory(std::string_view text) {
  auto q = ParseQuantity(text, "memory");
  if (!q.ok()) return q.error();
  // 2^63 is exactly representable; anything at or above it overflows int64.
  double bytes = std::ceil(*q);  // Kubernetes rounds fractional bytes up
  if (bytes >= 9223372036854775808.0) {
    return Error{fmt::format("invalid memory quantity '{}': too large", text), kHttpBadRequest};
  }
  return static_cast<int64_t>(bytes);
}

std::string FormatQuantityBytes(int64_t bytes) {
  static constexpr std::string_view kUnits[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};
  if (bytes > 0) {
    for (int i = 0; i < 6; ++i) {
      int64_t scale = int64_t{1} << (10 * (6 - i));
      if (bytes % scale == 0) return fmt::format("{}{}", bytes / scale, kUnits[i]);
    }
  }
  return std::to_string(bytes);
}

Result<Duration> ParseProtoDuration(std::string_view text) {
  std::string s(text);
  if (s.size() < 2 || s.back() != 's') {
    return Error{fmt::format("invalid duration '{}': want seconds like \"30s\"", text),
                 kHttpBadRequest};
  }
  s.pop_back();
  char* end = nullptr;
  errno = 0;
  double seconds = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(seconds) || seconds < 0) {
    return Error{fmt::format("invalid duration '{}'", text), kHttpBadRequest};
  }
  return FromSeconds(seconds);
}

std::string FormatBytesRounded(double bytes) {
  static constexpr std::string_view kUnits[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && std::abs(bytes) >= 1024) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{:.3g}{}", bytes, kUnits[unit]);
}

}  // namespace kfpbench::ir
