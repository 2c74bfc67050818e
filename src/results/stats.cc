#include "results/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>

#include "util/percentile.h"

namespace kfpbench::results {

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

uint64_t WeightedSample::Count() const {
  uint64_t n = 0;
  for (const auto& [value, count] : values) n += count;
  return n;
}

WeightedSample FromHistogram(const metrics::Histogram& h, double scale) {
  WeightedSample out;
  if (h.count() == 0) return out;
  struct Bucket {
    double low, width;
    uint64_t count;
  };
  std::vector<Bucket> buckets;
  // The sparse JSON form is the histogram's one public view of its buckets.
  const nlohmann::json sparse = h.ToJson();
  for (const auto& bucket : sparse["buckets"]) {
    auto index = bucket[0].get<size_t>();
    auto low = static_cast<double>(metrics::Histogram::BucketLowest(index));
    auto high = static_cast<double>(metrics::Histogram::BucketHighest(index));
    buckets.push_back({low, high - low, bucket[1].get<uint64_t>()});
  }
  const auto min = static_cast<double>(h.min()), max = static_cast<double>(h.max());
  auto at = [&](const Bucket& b, double share) {
    return std::clamp(b.low + share * b.width, min, max);
  };
  // The share of the way through each bucket at which the values' mean is
  // the exact mean: the mean rises with the share, so bisection finds it.
  auto mean_at = [&](double share) {
    double sum = 0;
    for (const auto& b : buckets) sum += at(b, share) * static_cast<double>(b.count);
    return sum / static_cast<double>(h.count());
  };
  double lo = 0, hi = 1;
  for (int i = 0; i < 50; ++i) {
    double mid = (lo + hi) / 2;
    (mean_at(mid) < h.mean() ? lo : hi) = mid;
  }
  const double share = (lo + hi) / 2;
  for (const auto& b : buckets) {
    double v = at(b, share) * scale;
    if (!out.values.empty() && out.values.back().first == v) {
      out.values.back().second += b.count;
    } else {
      out.values.emplace_back(v, b.count);
    }
  }
  return out;
}

WeightedSample FromValues(const std::vector<double>& values) {
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  WeightedSample out;
  for (double v : sorted) {
    if (!out.values.empty() && out.values.back().first == v) {
      ++out.values.back().second;
    } else {
      out.values.emplace_back(v, 1);
    }
  }
  return out;
}

WeightedSample Pooled(const std::vector<WeightedSample>& parts) {
  std::map<double, uint64_t> counts;
  for (const auto& p : parts) {
    for (const auto& [value, count] : p.values) counts[value] += count;
  }
  WeightedSample out;
  out.values.assign(counts.begin(), counts.end());
  return out;
}

double PercentileOf(const WeightedSample& s, double percent) {
  uint64_t n = s.Count();
  if (n == 0) return 0;
  uint64_t rank = NearestRank(n, std::clamp(percent, 0.0, 100.0) / 100);
  uint64_t seen = 0;
  for (const auto& [value, count] : s.values) {
    seen += count;
    if (seen >= rank) return value;
  }
  return s.values.back().first;
}

double MeanOf(const WeightedSample& s) {
  double sum = 0;
  uint64_t n = 0;
  for (const auto& [value, count] : s.values) {
    sum += value * static_cast<double>(count);
    n += count;
  }
  return n ? sum / static_cast<double>(n) : 0;
}

namespace {

// Each distinct value once, with its count in every group, in value order.
struct Tied {
  double value;
  std::vector<uint64_t> counts;
};

std::vector<Tied> Merged(const std::vector<const WeightedSample*>& groups) {
  std::map<double, std::vector<uint64_t>> by_value;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const auto& [value, count] : groups[g]->values) {
      auto& counts = by_value[value];
      counts.resize(groups.size());
      counts[g] += count;
    }
  }
  std::vector<Tied> out;
  out.reserve(by_value.size());
  for (auto& [value, counts] : by_value) out.push_back({value, std::move(counts)});
  return out;
}

// Rank sums per group (ties get their average rank) and the tie term
// sum(t^3 - t) over runs of equal values.
struct Ranks {
  std::vector<double> sums;
  double tie_term = 0;
};

Ranks RankSums(const std::vector<const WeightedSample*>& groups) {
  Ranks out;
  out.sums.assign(groups.size(), 0);
  double position = 0;  // values ranked so far
  for (const auto& tied : Merged(groups)) {
    double t = 0;
    for (uint64_t c : tied.counts) t += static_cast<double>(c);
    double average_rank = position + (t + 1) / 2;
    for (size_t g = 0; g < groups.size(); ++g) {
      out.sums[g] += average_rank * static_cast<double>(tied.counts[g]);
    }
    out.tie_term += t * t * t - t;
    position += t;
  }
  return out;
}

double NormalUpperTail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// The z with NormalUpperTail(z) = tail, by bisection: no closed form, and
// the few calls a comparison makes don't need a faster one.
double NormalQuantileUpper(double tail) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    double mid = (lo + hi) / 2;
    (NormalUpperTail(mid) > tail ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// A Poisson draw of one bucket's count, made a million times a comparison:
// by inversion for small means, and from the normal approximation, rounded,
// for large ones (whose resampled quantiles cannot tell the two apart), as
// libstdc++'s general sampler spends its time in logarithms.
class PoissonDraw {
 public:
  explicit PoissonDraw(uint64_t mean)
      : mean_(static_cast<double>(mean)), p0_(std::exp(-mean_)), sd_(std::sqrt(mean_)) {}
  uint64_t operator()(std::mt19937_64& rng) const {
    if (mean_ >= kNormalFrom) {
      std::normal_distribution<double> z;
      return static_cast<uint64_t>(std::max(0.0, std::round(mean_ + sd_ * z(rng))));
    }
    double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    uint64_t k = 0;
    double p = p0_, cdf = p0_;
    while (u > cdf && k < 1000) {
      ++k;
      p *= mean_ / static_cast<double>(k);
      cdf += p;
    }
    return k;
  }

 private:
  static constexpr double kNormalFrom = 40;
  double mean_, p0_, sd_;
};

}  // namespace

double KruskalWallisP(const std::vector<WeightedSample>& groups) {
  std::vector<const WeightedSample*> present;
  for (const auto& g : groups) {
    if (g.Count() > 0) present.push_back(&g);
  }
  if (present.size() < 2) return 1;
  Ranks ranks = RankSums(present);
  double n = 0, sum = 0;
  for (size_t g = 0; g < present.size(); ++g) {
    double ng = static_cast<double>(present[g]->Count());
    n += ng;
    sum += ranks.sums[g] * ranks.sums[g] / ng;
  }
  double h = 12 / (n * (n + 1)) * sum - 3 * (n + 1);
  double correction = 1 - ranks.tie_term / (n * n * n - n);
  if (correction <= 0) return 1;  // every value tied
  h = std::max(h / correction, 0.0);
  double df = static_cast<double>(present.size() - 1);
  if (present.size() == 2) return std::erfc(std::sqrt(h / 2));
  double c = 2 / (9 * df);
  return NormalUpperTail((std::cbrt(h / df) - (1 - c)) / std::sqrt(c));
}

double DetectableShift(double log_error, double alpha, double power) {
  if (!(log_error >= 0) || !std::isfinite(log_error))
    return std::numeric_limits<double>::infinity();
  return std::expm1((NormalQuantileUpper(alpha / 2) + NormalQuantileUpper(1 - power)) * log_error);
}

std::vector<BootstrapChange> BootstrapChanges(
    const WeightedSample& baseline, const WeightedSample& candidate,
    const std::vector<std::function<double(const WeightedSample&)>>& statistics, double confidence,
    int iterations, uint64_t seed) {
  std::vector<BootstrapChange> out(statistics.size());
  if (baseline.values.empty() || candidate.values.empty()) return out;
  for (size_t k = 0; k < statistics.size(); ++k) {
    double base = statistics[k](baseline);
    out[k].estimate = base != 0 ? statistics[k](candidate) / base - 1 : 0;
    out[k].interval = {out[k].estimate, out[k].estimate};
  }
  if (iterations <= 0) return out;
  std::mt19937_64 rng(seed);
  std::vector<PoissonDraw> draw_baseline, draw_candidate;
  for (const auto& [value, count] : baseline.values) draw_baseline.emplace_back(count);
  for (const auto& [value, count] : candidate.values) draw_candidate.emplace_back(count);
  auto resample = [&rng](const WeightedSample& from, const std::vector<PoissonDraw>& draws,
                         WeightedSample& to) {
    to.values.clear();
    for (size_t i = 0; i < from.values.size(); ++i) {
      if (uint64_t c = draws[i](rng); c > 0) to.values.emplace_back(from.values[i].first, c);
    }
  };
  std::vector<std::vector<double>> changes(statistics.size());
  WeightedSample a, b;
  for (int i = 0; i < iterations; ++i) {
    resample(baseline, draw_baseline, a);
    resample(candidate, draw_candidate, b);
    if (a.values.empty() || b.values.empty()) continue;
    for (size_t k = 0; k < statistics.size(); ++k) {
      double base = statistics[k](a);
      if (base == 0) continue;
      changes[k].push_back(statistics[k](b) / base - 1);
    }
  }
  const double tail = (1 - confidence) / 2;
  for (size_t k = 0; k < statistics.size(); ++k) {
    auto& c = changes[k];
    auto& r = out[k];
    if (c.empty()) continue;
    std::sort(c.begin(), c.end());
    const size_t n = c.size();
    // The r-th lowest and r-th highest resample, r the nearest rank of the
    // tail: the low end is above 0 exactly when fewer than tail x n resamples
    // are at or below 0, the high end below 0 when fewer than tail x n are at
    // or above it, so p, twice that share, is below 1 - confidence exactly then.
    const size_t rank = NearestRank(n, tail);
    r.interval.low = std::min(c[rank - 1], r.estimate);
    r.interval.high = std::max(c[n - rank], r.estimate);
    const auto at_or_below =
        static_cast<double>(std::upper_bound(c.begin(), c.end(), 0.0) - c.begin());
    const auto at_or_above =
        static_cast<double>(c.end() - std::lower_bound(c.begin(), c.end(), 0.0));
    const double far = r.estimate > 0   ? at_or_below
                       : r.estimate < 0 ? at_or_above
                                        : static_cast<double>(n);
    // No resample on the far side is p below 1 in n, not 0: n resamples
    // resolve no finer.
    r.p = std::min(1.0, std::max(2 * far, 1.0) / static_cast<double>(n));
    // A widened interval that now holds 0 is not significant, whatever the
    // resamples alone say.
    if (r.interval.low <= 0 && r.interval.high >= 0) r.p = std::max(r.p, 1 - confidence);
    double sum = 0, squares = 0, used = 0;
    for (double x : c) {
      if (x <= -1) continue;
      double l = std::log1p(x);
      sum += l;
      squares += l * l;
      ++used;
    }
    if (used > 1) {
      double mean = sum / used;
      r.log_spread = std::sqrt(std::max(0.0, (squares - used * mean * mean) / (used - 1)));
    }
  }
  return out;
}

}  // namespace kfpbench::results
