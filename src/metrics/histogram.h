// A log-linear histogram in the style of HdrHistogram: exact below 256, then
// 128 buckets per power of two, so any recorded value is known to within
// 1/128 (0.78%) of itself. It never stores samples, its size is bounded by the
// largest value seen (at most 64 KiB), and two histograms merge exactly by
// adding counts — which is what lets results from repetitions or from several
// load-generator processes combine into true percentiles.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kfpbench::metrics {

class Histogram {
 public:
  static constexpr int kSubBucketBits = 7;  // 2^7 = 128 buckets per doubling

  // Negative values are clamped to 0: durations can't be negative, and a
  // clock step must not corrupt the histogram.
  void Record(int64_t value, uint64_t count = 1);
  void Merge(const Histogram& other);
  void Reset();

  uint64_t count() const { return count_; }
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return count_ ? max_ : 0; }
  double mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0.0; }
  double sum() const { return static_cast<double>(sum_); }
  // Percentile by the nearest-rank method: the smallest recorded value v such
  // that at least p% of samples are <= v, reported as the upper edge of v's
  // bucket (so never below the true value, and at most 0.78% above it),
  // clamped to the exact maximum. p in [0, 100]; 0 for an empty histogram.
  int64_t ValueAtPercentile(double p) const;
  // Values in buckets wholly at or below `value` (a Prometheus `le` bucket).
  // A bucket straddling `value` is left out, so the count is that of values
  // <= value to within the bucket resolution (0.78% of `value`), never more.
  uint64_t CountAtOrBelow(int64_t value) const;

  // Sparse form: {"count":N,"min":..,"max":..,"sum":..,"sub_bucket_bits":7,
  // "buckets":[[index,count],...]}.
  nlohmann::json ToJson() const;
  static Result<Histogram> FromJson(const nlohmann::json& j);

  // Bucket arithmetic, public for tests.
  static size_t BucketIndex(int64_t value);
  static int64_t BucketLowest(size_t index);
  static int64_t BucketHighest(size_t index);

 private:
  std::vector<uint64_t> counts_;  // grows to the highest index used
  uint64_t count_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
  // Sum in a wide type: 2^63 ns is 292 years, but a long soak sums many.
  __int128 sum_ = 0;
};

}  // namespace kfpbench::metrics
