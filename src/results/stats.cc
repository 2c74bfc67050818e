#include "results/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "util/percentile.h"

namespace kfpbench::results {

MannWhitney MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitney out;
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  if (a.empty() || b.empty()) return out;
  std::vector<std::pair<double, int>> all;
  all.reserve(a.size() + b.size());
  for (double v : a) all.emplace_back(v, 0);
  for (double v : b) all.emplace_back(v, 1);
  std::sort(all.begin(), all.end());
  double rank_sum_a = 0, tie_term = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    double t = static_cast<double>(j - i);
    double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      if (all[k].second == 0) rank_sum_a += avg_rank;
    }
    tie_term += t * t * t - t;
    i = j;
  }
  const double n = n1 + n2;
  out.u = rank_sum_a - n1 * (n1 + 1) / 2;
  double mean = n1 * n2 / 2;
  double variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return out;  // every value tied: no evidence either way
  double diff = out.u - mean;
  // Continuity correction: U moves in steps of 1 (0.5 with ties).
  double corrected = std::max(std::fabs(diff) - 0.5, 0.0);
  out.z = std::copysign(corrected / std::sqrt(variance), diff);
  out.p = std::erfc(std::fabs(out.z) / std::sqrt(2.0));
  return out;
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

}  // namespace kfpbench::results
