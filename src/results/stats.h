// The statistics behind `kfpbench compare`: a seeded bootstrap that assumes
// no distribution (latencies are skewed and multi-modal), from which each
// statistic's estimate, interval, p-value and power all come, so reruns print
// the same numbers and no figure contradicts another; and a rank test of
// whether repetitions differ.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "metrics/histogram.h"

namespace kfpbench::results {

double Mean(const std::vector<double>& values);

struct Interval {
  double low = 0, high = 0;
};

// A sample as its distinct values, each with how often it occurs, sorted by
// value: a histogram's buckets (millions of calls in a few hundred entries,
// and the repetitions' histograms pool exactly), runs, or one figure per
// repetition. Every test below takes this form.
struct WeightedSample {
  std::vector<std::pair<double, uint64_t>> values;
  uint64_t Count() const;
};

// Each occupied bucket as one value inside it, times `scale`: the same
// fraction of the way through every bucket, chosen so that the sample's mean
// is the histogram's exact mean, and clamped to the exact minimum and
// maximum. A bucket's upper edge (Histogram::ValueAtPercentile's report)
// would put every value up to 0.78% above itself: runs of 900.4 ms read as
// 903 ms beside their exact mean of 900.4 ms. Order is kept, so rank tests
// see the buckets as they are.
WeightedSample FromHistogram(const metrics::Histogram& h, double scale = 1);
WeightedSample FromValues(const std::vector<double>& values);
WeightedSample Pooled(const std::vector<WeightedSample>& parts);

// The nearest-rank percentile (0..100) of a weighted sample; 0 when empty.
double PercentileOf(const WeightedSample& s, double percent);
double MeanOf(const WeightedSample& s);

// Kruskal-Wallis H test (tie-corrected) that the groups come from one
// distribution; the p-value from chi-square with groups - 1 degrees of freedom
// (Wilson-Hilferty beyond one). 1 with fewer than two non-empty groups.
double KruskalWallisP(const std::vector<WeightedSample>& groups);

// One statistic's change from the baseline to the candidate, all of it from
// one bootstrap: the estimate on the samples as given, the percentile
// interval around it, the two-sided p-value that interval implies, and the
// resamples' spread on the log scale, which sizes the test's power.
struct BootstrapChange {
  double estimate = 0;  // statistic(candidate) / statistic(baseline) - 1
  // Nearest-rank percentiles of the resampled changes, widened to hold
  // `estimate` where the resamples' discreteness leaves it outside.
  Interval interval;
  // 2 x the share of resamples on the far side of 0 from `estimate`, capped
  // at 1 and at least 1 / resamples: below 1 - confidence exactly when
  // `interval` excludes 0 (with resamples above 1 / (1 - confidence)), and at
  // least 1 - confidence whenever it holds 0.
  double p = 1;
  double log_spread = 0;  // standard deviation of log(1 + change) over the resamples
};

// Statistic(candidate)/statistic(baseline) - 1 for each statistic, by the
// Poisson bootstrap (each value's count redrawn as Poisson of itself), so a
// resample costs the number of distinct values, not of calls. The statistics
// share the resamples. Resamples whose baseline statistic is 0 are skipped.
std::vector<BootstrapChange> BootstrapChanges(
    const WeightedSample& baseline, const WeightedSample& candidate,
    const std::vector<std::function<double(const WeightedSample&)>>& statistics, double confidence,
    int iterations, uint64_t seed);

// The power of a test of a change on the log scale, stated as a size: the
// smallest slowdown d that a two-sided test at `alpha` finds with probability
// `power` when its estimate of log(1 + d) has standard error `log_error`
// (normal approximation): expm1((z(1 - alpha/2) + z(power)) x log_error).
double DetectableShift(double log_error, double alpha, double power = 0.8);

}  // namespace kfpbench::results
