#include "results/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>

#include "util/percentile.h"

namespace kfpbench::results {

MannWhitney MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b) {
  return MannWhitneyU(FromValues(a), FromValues(b));
}

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

Interval BootstrapRelativeChange(const std::vector<double>& baseline,
                                 const std::vector<double>& candidate,
                                 const std::function<double(const std::vector<double>&)>& statistic,
                                 double confidence, int iterations, uint64_t seed) {
  Interval out;
  if (baseline.empty() || candidate.empty() || iterations <= 0) return out;
  std::mt19937_64 rng(seed);
  std::vector<double> changes, a(baseline.size()), b(candidate.size());
  changes.reserve(iterations);
  std::uniform_int_distribution<size_t> pick_a(0, baseline.size() - 1);
  std::uniform_int_distribution<size_t> pick_b(0, candidate.size() - 1);
  for (int i = 0; i < iterations; ++i) {
    for (auto& v : a) v = baseline[pick_a(rng)];
    for (auto& v : b) v = candidate[pick_b(rng)];
    double base = statistic(a);
    if (base == 0) continue;
    changes.push_back(statistic(b) / base - 1);
  }
  if (changes.empty()) return out;
  double tail = (1 - confidence) / 2 * 100;
  out.low = Percentile(changes, tail);
  out.high = Percentile(changes, 100 - tail);
  return out;
}

uint64_t WeightedSample::Count() const {
  uint64_t n = 0;
  for (const auto& [value, count] : values) n += count;
  return n;
}

WeightedSample FromHistogram(const metrics::Histogram& h, double scale) {
  WeightedSample out;
  if (h.count() == 0) return out;
  // The sparse JSON form is the histogram's one public view of its buckets.
  const nlohmann::json sparse = h.ToJson();
  for (const auto& bucket : sparse["buckets"]) {
    auto index = bucket[0].get<size_t>();
    auto count = bucket[1].get<uint64_t>();
    int64_t value = std::clamp(metrics::Histogram::BucketHighest(index), h.min(), h.max());
    double v = static_cast<double>(value) * scale;
    if (!out.values.empty() && out.values.back().first == v) {
      out.values.back().second += count;
    } else {
      out.values.emplace_back(v, count);
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

// P(X (1 + d) > X') + P(X (1 + d) = X') / 2 for X, X' drawn from `s`: the
// probability that a slowed value beats an unchanged one.
double Superiority(const WeightedSample& s, double d, double total) {
  double wins = 0;
  size_t below = 0;    // values strictly below the slowed value
  double below_w = 0;  // and their weight
  for (const auto& [value, count] : s.values) {
    double slowed = value * (1 + d);
    while (below < s.values.size() && s.values[below].first < slowed) {
      below_w += static_cast<double>(s.values[below].second);
      ++below;
    }
    double equal = below < s.values.size() && s.values[below].first == slowed
                       ? static_cast<double>(s.values[below].second)
                       : 0;
    wins += static_cast<double>(count) * (below_w + equal / 2);
  }
  return wins / (total * total);
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

MannWhitney MannWhitneyU(const WeightedSample& a, const WeightedSample& b) {
  MannWhitney out;
  const double n1 = static_cast<double>(a.Count()), n2 = static_cast<double>(b.Count());
  if (n1 == 0 || n2 == 0) return out;
  Ranks ranks = RankSums({&a, &b});
  const double n = n1 + n2;
  out.u = ranks.sums[0] - n1 * (n1 + 1) / 2;
  double mean = n1 * n2 / 2;
  double variance = n1 * n2 / 12 * ((n + 1) - ranks.tie_term / (n * (n - 1)));
  if (variance <= 0) return out;  // every value tied: no evidence either way
  double diff = out.u - mean;
  // Continuity correction: U moves in steps of 1 (0.5 with ties).
  double corrected = std::max(std::fabs(diff) - 0.5, 0.0);
  out.z = std::copysign(corrected / std::sqrt(variance), diff);
  out.p = std::erfc(std::fabs(out.z) / std::sqrt(2.0));
  return out;
}

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

double DetectableChange(const WeightedSample& baseline, uint64_t n_baseline, uint64_t n_candidate,
                        double alpha, double power) {
  constexpr double kNone = std::numeric_limits<double>::infinity();
  double total = static_cast<double>(baseline.Count());
  if (total == 0 || n_baseline == 0 || n_candidate == 0) return kNone;
  const double n1 = static_cast<double>(n_baseline), n2 = static_cast<double>(n_candidate);
  double sigma = std::sqrt(n1 * n2 * (n1 + n2 + 1) / 12);
  double z = NormalQuantileUpper(alpha / 2) + NormalQuantileUpper(1 - power);
  // The superiority a slowdown must reach for E[U] to stand z sigma (and the
  // continuity correction) from its null mean.
  double needed = 0.5 + (z * sigma + 0.5) / (n1 * n2);
  if (needed >= 1) return kNone;
  double hi = 1;
  constexpr double kLargest = 1e6;  // a millionfold slowdown: beyond it, none
  while (Superiority(baseline, hi, total) < needed) {
    hi *= 2;
    if (hi > kLargest) return kNone;
  }
  double lo = 0;
  for (int i = 0; i < 60; ++i) {
    double mid = (lo + hi) / 2;
    (Superiority(baseline, mid, total) < needed ? lo : hi) = mid;
  }
  return hi;
}

std::vector<Interval> BootstrapRelativeChanges(
    const WeightedSample& baseline, const WeightedSample& candidate,
    const std::vector<std::function<double(const WeightedSample&)>>& statistics, double confidence,
    int iterations, uint64_t seed) {
  std::vector<Interval> out(statistics.size());
  if (baseline.values.empty() || candidate.values.empty() || iterations <= 0) return out;
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
  double tail = (1 - confidence) / 2 * 100;
  for (size_t k = 0; k < statistics.size(); ++k) {
    if (changes[k].empty()) continue;
    out[k].low = Percentile(changes[k], tail);
    out[k].high = Percentile(changes[k], 100 - tail);
  }
  return out;
}

}  // namespace kfpbench::results
