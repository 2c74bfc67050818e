#include "exec/duration_dist.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace kfpbench::exec {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

Result<double> ParseNumber(std::string_view text) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
      !std::isfinite(value)) {
    return Error{fmt::format("invalid number '{}'", text)};
  }
  return value;
}

Duration FromDoubleNs(double ns) {
  // Clamp so a wild lognormal draw cannot overflow int64 nanoseconds (~292y).
  return Duration(static_cast<int64_t>(std::clamp(ns, 0.0, 9e18)));
}

}  // namespace

Duration DurationDist::Sample(std::mt19937_64& rng) const {
  switch (kind) {
    case Kind::kConstant:
      return a;
    case Kind::kUniform: {
      std::uniform_real_distribution<double> d(static_cast<double>(a.count()),
                                               static_cast<double>(b.count()));
      return FromDoubleNs(d(rng));
    }
    case Kind::kLognormal: {
      // Median m means mu = ln(m).
      std::lognormal_distribution<double> d(std::log(static_cast<double>(a.count())), sigma);
      return FromDoubleNs(d(rng));
    }
    case Kind::kExponential: {
      std::exponential_distribution<double> d(1.0 / static_cast<double>(a.count()));
      return FromDoubleNs(d(rng));
    }
  }
  return a;
}

std::string DurationDist::ToString() const {
  switch (kind) {
    case Kind::kConstant:
      return "constant:" + FormatDuration(a);
    case Kind::kUniform:
      return fmt::format("uniform:{}:{}", FormatDuration(a), FormatDuration(b));
    case Kind::kLognormal:
      return fmt::format("lognormal:{}:{}", FormatDuration(a), sigma);
    case Kind::kExponential:
      return "exponential:" + FormatDuration(a);
  }
  return "";
}

Result<DurationDist> ParseDurationDist(std::string_view spec) {
  auto bad = [&](std::string_view why) {
    return Error{fmt::format("invalid duration distribution '{}': {}", spec, why)};
  };
  std::vector<std::string_view> parts = Split(spec, ':');
  std::string_view kind = parts[0];
  auto want_args = [&](size_t n, std::string_view form) -> Status {
    if (parts.size() != n + 1) return bad(fmt::format("expected {}", form));
    return Ok();
  };
  auto duration = [&](std::string_view text) -> Result<Duration> {
    auto d = ParseDuration(text);
    if (!d.ok()) return bad(d.error().message);
    return *d;
  };

  if (parts.size() == 1) {  // bare duration
    auto d = ParseDuration(spec);
    if (!d.ok()) {
      return bad(
          "expected constant:D, uniform:MIN:MAX, lognormal:MEDIAN:SIGMA, exponential:MEAN "
          "or a bare duration");
    }
    return DurationDist::Constant(*d);
  }
  DurationDist dist;
  if (kind == "constant") {
    if (auto ok = want_args(1, "constant:DURATION"); !ok.ok()) return ok.error();
    auto d = duration(parts[1]);
    if (!d.ok()) return d.error();
    return DurationDist::Constant(*d);
  }
  if (kind == "uniform") {
    if (auto ok = want_args(2, "uniform:MIN:MAX"); !ok.ok()) return ok.error();
    auto lo = duration(parts[1]);
    if (!lo.ok()) return lo.error();
    auto hi = duration(parts[2]);
    if (!hi.ok()) return hi.error();
    if (*hi < *lo) return bad("MIN is greater than MAX");
    dist.kind = DurationDist::Kind::kUniform;
    dist.a = *lo;
    dist.b = *hi;
    return dist;
  }
  if (kind == "lognormal") {
    if (auto ok = want_args(2, "lognormal:MEDIAN:SIGMA"); !ok.ok()) return ok.error();
    auto median = duration(parts[1]);
    if (!median.ok()) return median.error();
    auto sigma = ParseNumber(parts[2]);
    if (!sigma.ok()) return bad(sigma.error().message);
    if (median->count() <= 0) return bad("MEDIAN must be positive");
    if (*sigma < 0) return bad("SIGMA must not be negative");
    dist.kind = DurationDist::Kind::kLognormal;
    dist.a = *median;
    dist.sigma = *sigma;
    return dist;
  }
  if (kind == "exponential") {
    if (auto ok = want_args(1, "exponential:MEAN"); !ok.ok()) return ok.error();
    auto mean = duration(parts[1]);
    if (!mean.ok()) return mean.error();
    if (mean->count() <= 0) return bad("MEAN must be positive");
    dist.kind = DurationDist::Kind::kExponential;
    dist.a = *mean;
    return dist;
  }
  return bad(
      fmt::format("unknown distribution '{}' (constant, uniform, lognormal, exponential)", kind));
}

Result<std::pair<std::string, DurationDist>> ParseLabeledDurationDist(std::string_view spec) {
  std::string label;
  std::string_view rest = spec;
  if (size_t eq = spec.find('='); eq != std::string_view::npos) {
    label = std::string(spec.substr(0, eq));
    rest = spec.substr(eq + 1);
    if (label.empty()) {
      return Error{fmt::format("invalid duration distribution '{}': empty executor label", spec)};
    }
  }
  auto dist = ParseDurationDist(rest);
  if (!dist.ok()) return dist.error();
  return std::make_pair(std::move(label), *dist);
}

}  // namespace kfpbench::exec
