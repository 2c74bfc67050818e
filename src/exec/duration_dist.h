// Task-duration distributions for the stub executor and the simulator:
// "constant:2s", "uniform:1s:3s", "lognormal:60s:0.3" (median, sigma),
// "exponential:10s" (mean). A bare duration ("2s") is constant.
#pragma once

#include <random>
#include <string>
#include <string_view>
#include <utility>

#include "util/result.h"
#include "util/time.h"

namespace kfpbench::exec {

struct DurationDist {
  enum class Kind { kConstant, kUniform, kLognormal, kExponential };
  Kind kind = Kind::kConstant;
  Duration a{0};     // constant value, uniform min, lognormal median, exponential mean
  Duration b{0};     // uniform max
  double sigma = 0;  // lognormal: standard deviation of ln(duration)

  static DurationDist Constant(Duration d) { return {Kind::kConstant, d, Duration{0}, 0}; }

  // Never negative.
  Duration Sample(std::mt19937_64& rng) const;
  // The spec it parses from, e.g. "lognormal:1m0s:0.3".
  std::string ToString() const;
};

Result<DurationDist> ParseDurationDist(std::string_view spec);

// "exec-train=lognormal:60s:0.3" -> {"exec-train", dist}. Without "label="
// the label is empty, meaning "every other executor".
Result<std::pair<std::string, DurationDist>> ParseLabeledDurationDist(std::string_view spec);

}  // namespace kfpbench::exec
