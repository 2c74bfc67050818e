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

KsTwoSample TwoSampleKs(std::vector<double> a, std::vector<double> b) {
  KsTwoSample out;
  if (a.empty() || b.empty()) return out;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  const double n = static_cast<double>(a.size()), m = static_cast<double>(b.size());
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    out.d = std::max(out.d, std::abs(static_cast<double>(i) / n - static_cast<double>(j) / m));
  }
  const double ne = std::sqrt(n * m / (n + m));
  const double lambda = (ne + 0.12 + 0.11 / ne) * out.d;
  if (lambda < 0.2) return out;  // the series is 1 to within 1e-20 here
  double p = 0;
  for (int k = 1; k <= 100; ++k) {
    const double term = std::exp(-2.0 * k * k * lambda * lambda);
    p += (k % 2 == 1 ? 2.0 : -2.0) * term;
    if (term < 1e-12) break;
  }
  out.p = std::clamp(p, 0.0, 1.0);
  return out;
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
