// The statistics behind `kfpbench compare`: a rank test that assumes no
// distribution (latencies are skewed and multi-modal) and a seeded bootstrap
// for confidence intervals, so reruns print the same numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace kfpbench::results {

struct MannWhitney {
  double u = 0;  // U of the first sample
  double z = 0;  // normal approximation, tie- and continuity-corrected
  double p = 1;  // two-sided p-value
};

// Two-sided Mann-Whitney U test with the normal approximation (ties get
// average ranks and the variance their correction). p = 1 when either sample
// is empty or every value is tied.
MannWhitney MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b);

double Mean(const std::vector<double>& values);

struct Interval {
  double low = 0, high = 0;
};

// Percentile bootstrap interval of statistic(candidate)/statistic(baseline) - 1,
// resampling each side with replacement `iterations` times from a generator
// seeded with `seed`. Resamples whose baseline statistic is 0 are skipped.
Interval BootstrapRelativeChange(const std::vector<double>& baseline,
                                 const std::vector<double>& candidate,
                                 const std::function<double(const std::vector<double>&)>& statistic,
                                 double confidence, int iterations, uint64_t seed);

}  // namespace kfpbench::results
