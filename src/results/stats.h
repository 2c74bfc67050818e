// The statistics behind `kfpbench compare`: a rank test that assumes no
// distribution (latencies are skewed and multi-modal) and a seeded bootstrap
// for confidence intervals, so reruns print the same numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "metrics/histogram.h"

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

// A sample as its distinct values, each with how often it occurs, sorted by
// value: a histogram's buckets (millions of calls in a few hundred entries,
// and the repetitions' histograms pool exactly), runs, or one figure per
// repetition. Every test below takes this form.
struct WeightedSample {
  std::vector<std::pair<double, uint64_t>> values;
  uint64_t Count() const;
};

// Each occupied bucket as its upper edge (clamped to the exact minimum and
// maximum, as Histogram::ValueAtPercentile reports it), times `scale`.
WeightedSample FromHistogram(const metrics::Histogram& h, double scale = 1);
WeightedSample FromValues(const std::vector<double>& values);
WeightedSample Pooled(const std::vector<WeightedSample>& parts);

// The nearest-rank percentile (0..100) of a weighted sample; 0 when empty.
double PercentileOf(const WeightedSample& s, double percent);
double MeanOf(const WeightedSample& s);

// The U test over weighted samples: the same test as over their values
// written out one by one.
MannWhitney MannWhitneyU(const WeightedSample& a, const WeightedSample& b);

// Kruskal-Wallis H test (tie-corrected) that the groups come from one
// distribution; the p-value from chi-square with groups - 1 degrees of freedom
// (Wilson-Hilferty beyond one). 1 with fewer than two non-empty groups.
double KruskalWallisP(const std::vector<WeightedSample>& groups);

// The power of the U test, stated as a size: the smallest slowdown d (the
// candidate is the baseline with every value times 1 + d) that a two-sided U
// test at `alpha` finds with probability `power`, for samples of n_baseline
// and n_candidate values shaped like `baseline` (Noether's normal
// approximation with the continuity correction). Infinity when no slowdown,
// however large, could be found: 3 against 3 values never reach p < 0.05.
double DetectableChange(const WeightedSample& baseline, uint64_t n_baseline, uint64_t n_candidate,
                        double alpha, double power = 0.8);

// BootstrapRelativeChange over weighted samples, by the Poisson bootstrap
// (each value's count redrawn as Poisson of itself), so a resample costs the
// number of distinct values, not of calls. Several statistics share the
// resamples: one interval per statistic.
std::vector<Interval> BootstrapRelativeChanges(
    const WeightedSample& baseline, const WeightedSample& candidate,
    const std::vector<std::function<double(const WeightedSample&)>>& statistics, double confidence,
    int iterations, uint64_t seed);

}  // namespace kfpbench::results
