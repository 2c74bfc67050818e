#include "sim/step_draw.h"

#include <algorithm>
#include <cmath>

namespace kfpbench::sim {
namespace {

// SplitMix64's finaliser: every input bit reaches every output bit.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t Fnv1a(std::string_view s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// The standard normal's quantile: Acklam's rational approximation (relative
// error 1.2e-9), enough for durations to the nanosecond of a day.
double NormalQuantile(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  if (p < kLow) {
    double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - kLow) return -NormalQuantile(1 - p);
  double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

Duration FromNanos(double ns) {
  // Clamp so a far tail cannot overflow int64 nanoseconds (~292 years).
  return Duration(static_cast<int64_t>(std::clamp(ns, 0.0, 9e18)));
}

}  // namespace

double TaskUniform(uint64_t seed, std::string_view run_id, std::string_view label,
                   uint32_t ordinal) {
  uint64_t h = Mix(seed);
  h = Mix(Fnv1a(run_id, h ^ 0xcbf29ce484222325ULL));
  h = Mix(Fnv1a(label, h) ^ ordinal);
  // The top 53 bits, centred in their interval: never 0, never 1.
  return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
}

Duration DurationAt(const exec::DurationDist& dist, double p) {
  p = std::clamp(p, 1e-15, 1 - 1e-15);
  const auto a = static_cast<double>(dist.a.count());
  switch (dist.kind) {
    case exec::DurationDist::Kind::kConstant:
      return dist.a;
    case exec::DurationDist::Kind::kUniform:
      return FromNanos(a + p * (static_cast<double>(dist.b.count()) - a));
    case exec::DurationDist::Kind::kLognormal:
      return FromNanos(a * std::exp(dist.sigma * NormalQuantile(p)));
    case exec::DurationDist::Kind::kExponential:
      return FromNanos(-a * std::log1p(-p));
  }
  return dist.a;
}

Duration ExpectedDuration(const exec::DurationDist& dist) {
  const auto a = static_cast<double>(dist.a.count());
  switch (dist.kind) {
    case exec::DurationDist::Kind::kConstant:
    case exec::DurationDist::Kind::kExponential:
      return dist.a;
    case exec::DurationDist::Kind::kUniform:
      return FromNanos((a + static_cast<double>(dist.b.count())) / 2);
    case exec::DurationDist::Kind::kLognormal:
      return FromNanos(a * std::exp(dist.sigma * dist.sigma / 2));
  }
  return dist.a;
}

StepModels ExpectedSteps(const StepModels& models) {
  StepModels expected = models;
  auto fix = [](StepModel& m) {
    m.duration = exec::DurationDist::Constant(ExpectedDuration(m.duration));
  };
  fix(expected.fallback);
  for (auto& [label, m] : expected.by_label) fix(m);
  return expected;
}

uint64_t ReplicationSeed(uint64_t seed, int index) {
  return seed + static_cast<uint64_t>(std::max(index, 0));
}

}  // namespace kfpbench::sim
