#include "util/human.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

namespace kfpbench {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

// `value` of `unit` nanoseconds (value / unit in [1, 1000)) to three
// significant digits, truncated, trailing zeros dropped: "2.35", "59.9", "340".
std::string ThreeDigits(int64_t value, int64_t unit) {
  const int64_t whole = value / unit;
  int decimals = whole >= 100 ? 0 : whole >= 10 ? 1 : 2;
  int64_t scale = decimals == 0 ? 1 : decimals == 1 ? 10 : 100;
  // value * scale fits: value < 1000 * unit <= 6e13.
  int64_t shown = value * scale / unit;
  while (decimals > 0 && shown % 10 == 0) {
    shown /= 10;
    scale /= 10;
    --decimals;
  }
  if (decimals == 0) return fmt::format("{}", shown);
  return fmt::format("{}.{:0{}}", shown / scale, shown % scale, decimals);
}

int64_t Pow10(int n) {
  int64_t p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// Hours, minutes and seconds with `decimals` digits of the second, for a
// non-negative count of nanoseconds.
std::string Clock(int64_t ns, int decimals) {
  const int64_t s = ns / kNanosPerSecond;
  std::string fraction;
  if (decimals > 0) {
    const int64_t digits = (ns % kNanosPerSecond) / Pow10(9 - decimals);
    fraction = fmt::format(".{:0{}}", digits, decimals);
  }
  if (s < 60) return fmt::format("{}{}s", s, fraction);
  if (s < 3600) return fmt::format("{}m{}{}s", s / 60, s % 60, fraction);
  return fmt::format("{}h{}m{}{}s", s / 3600, (s % 3600) / 60, s % 60, fraction);
}

// `ns` (non-negative) to the nearest multiple of `step`, halves up; down
// where up would pass the largest count (a Duration::max() shown).
int64_t RoundTo(int64_t ns, int64_t step) {
  const int64_t down = ns / step * step;
  if (down > std::numeric_limits<int64_t>::max() - step) return down;
  return ns - down >= step - step / 2 ? down + step : down;
}

// The nanoseconds of `ns` shown at `decimals` digits of the second.
int64_t Rounded(int64_t ns, int decimals) { return RoundTo(ns, Pow10(9 - decimals)); }

// The step FormatDuration shows `ns` (non-negative) to: three significant
// digits of its unit below a minute, whole seconds from a minute.
int64_t ShownStep(int64_t ns) {
  if (ns < 1000) return 1;
  const int64_t unit = ns < 1'000'000 ? 1000 : ns < kNanosPerSecond ? 1'000'000 : kNanosPerSecond;
  if (ns >= 60 * kNanosPerSecond) return kNanosPerSecond;
  const int64_t whole = ns / unit;
  return unit / (whole >= 100 ? 1 : whole >= 10 ? 10 : 100);
}

// `ns` rounded to the precision it is shown at; a value that rounds up into
// the next unit (59.96 s, 999.7 ms) is shown at that unit's precision.
int64_t RoundedToShown(int64_t ns) {
  const int64_t step = ShownStep(ns);
  int64_t r = RoundTo(ns, step);
  if (const int64_t coarser = ShownStep(r); coarser != step) r = RoundTo(ns, coarser);
  return r;
}

}  // namespace

std::string FormatDuration(Duration d) {
  int64_t ns = d.count();
  if (ns == Duration::min().count()) ++ns;  // |min| does not fit
  const std::string sign = ns < 0 ? "-" : "";
  // Rounded first, so what is formatted below (which drops digits) is
  // exact at the precision shown.
  ns = RoundedToShown(std::llabs(ns));
  if (ns == 0) return "0s";
  if (ns < 1000) return fmt::format("{}{}ns", sign, ns);
  if (ns < 1'000'000) return sign + ThreeDigits(ns, 1000) + "us";
  if (ns < kNanosPerSecond) return sign + ThreeDigits(ns, 1'000'000) + "ms";
  if (ns < 60 * kNanosPerSecond) return sign + ThreeDigits(ns, kNanosPerSecond) + "s";
  return sign + Clock(ns, 0);
}

std::string FormatDurationTo(Duration d, int decimals) {
  decimals = std::clamp(decimals, 0, 9);
  int64_t ns = d.count();
  if (ns == Duration::min().count()) ++ns;
  const std::string sign = ns < 0 ? "-" : "";
  return sign + Clock(Rounded(std::llabs(ns), decimals), decimals);
}

std::string FormatDurationAgainst(Duration d, Duration limit) {
  const std::string plain = FormatDuration(d);
  // FormatDuration's own precision is enough when what it shows parses back
  // to a value on the same side of the limit as d (both rounded alike).
  auto shown = ParseDuration(plain);
  const int64_t v = d.count(), l = limit.count();
  auto same_side = [&](int64_t a, int64_t b) { return (a < b) == (v < l) && (a == b) == (v == l); };
  if (v >= 0 && shown.ok()) {
    auto limit_shown = ParseDuration(FormatDuration(limit));
    if (limit_shown.ok() && same_side(shown->count(), limit_shown->count())) return plain;
  }
  if (v < 0 || l < 0) return plain;
  for (int decimals = 0; decimals <= 9; ++decimals) {
    if (same_side(Rounded(v, decimals), Rounded(l, decimals))) {
      return FormatDurationTo(d, decimals);
    }
  }
  return FormatDurationTo(d, 9);
}

std::string FormatDurationExact(Duration d) {
  const int64_t ns = std::llabs(d.count() == Duration::min().count() ? d.count() + 1 : d.count());
  int decimals = 0;
  while (decimals < 9 && Rounded(ns, decimals) != ns) ++decimals;
  return FormatDurationTo(d, decimals);
}

std::string FormatDurationKnownTo(Duration d, double error) {
  if (!(error > 0)) return FormatDuration(d);
  const double span = ToSeconds(d) * error / 4;
  double step = 0;
  for (double s : {1.0, 10.0, 60.0, 600.0, 3600.0}) {
    if (s <= span) step = s;
  }
  if (step == 0) return FormatDuration(d);
  return "about " + FormatDuration(FromSeconds(std::round(ToSeconds(d) / step) * step));
}

std::string FormatBytes(double bytes) {
  static constexpr std::string_view kUnits[] = {"B", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (!std::isfinite(bytes)) return fmt::format("{}B", bytes);
  const std::string sign = bytes < 0 ? "-" : "";
  long double b = std::fabs(static_cast<long double>(bytes));
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && b >= 1024) {
    b /= 1024;
    ++unit;
  }
  // Bytes are whole, and a power of two divides them exactly, so `b` is the
  // exact quotient: truncating it never shows more than there is.
  const int decimals = b >= 100 ? 0 : b >= 10 ? 1 : 2;
  const long double scale = decimals == 0 ? 1 : decimals == 1 ? 10 : 100;
  const auto shown = static_cast<int64_t>(std::floor(b * scale));
  std::string number;
  if (decimals == 0) {
    number = fmt::format("{}", shown);
  } else {
    const auto s = static_cast<int64_t>(scale);
    number = fmt::format("{}.{:0{}}", shown / s, shown % s, decimals);
    while (number.back() == '0') number.pop_back();
    if (number.back() == '.') number.pop_back();
  }
  return sign + number + std::string(kUnits[unit]);
}

std::string Plural(int64_t count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

}  // namespace kfpbench
