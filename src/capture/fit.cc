#include "capture/fit.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "util/percentile.h"

namespace kfpbench::capture {

LognormalFit FitLognormal(std::vector<double> seconds) {
  std::erase_if(seconds, [](double x) { return !(x > 0) || !std::isfinite(x); });
  LognormalFit fit;
  if (seconds.size() < 2) return fit;
  std::sort(seconds.begin(), seconds.end());
  const double n = static_cast<double>(seconds.size());
  double mean = 0;
  for (double x : seconds) mean += std::log(x);
  mean /= n;
  double var = 0;
  for (double x : seconds) var += (std::log(x) - mean) * (std::log(x) - mean);
  fit.median = std::exp(mean);
  fit.sigma = std::sqrt(var / (n - 1));
  fit.n = seconds.size();
  double d = 0;
  for (size_t i = 0; i < seconds.size(); ++i) {
    const double f = LognormalCdf(fit, seconds[i]);
    d = std::max({d, static_cast<double>(i + 1) / n - f, f - static_cast<double>(i) / n});
  }
  fit.ks_d = d;
  return fit;
}

double LognormalCdf(const LognormalFit& fit, double x) {
  if (!(x > 0)) return 0;
  if (fit.sigma <= 0) return x >= fit.median ? 1 : 0;
  return 0.5 * std::erfc(-(std::log(x) - std::log(fit.median)) / (fit.sigma * std::sqrt(2.0)));
}

nlohmann::json Quantiles(const std::vector<double>& seconds) {
  if (seconds.empty()) return {{"n", 0}};
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double share) { return sorted[NearestRank(sorted.size(), share) - 1]; };
  return {{"n", sorted.size()},
          {"min", sorted.front()},
          {"p05", at(0.05)},
          {"p25", at(0.25)},
          {"p50", at(0.5)},
          {"p75", at(0.75)},
          {"p90", at(0.9)},
          {"p95", at(0.95)},
          {"p99", at(0.99)},
          {"max", sorted.back()},
          {"mean", std::accumulate(sorted.begin(), sorted.end(), 0.0) /
                       static_cast<double>(sorted.size())}};
}

}  // namespace kfpbench::capture
