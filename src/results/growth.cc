#include "results/growth.h"

#include <algorithm>
#include <cmath>

namespace kfpbench::results {
namespace {

// Two-sided 95% quantiles of Student's t, by degrees of freedom 1..30.
constexpr double kT95[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                           2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                           2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};

double T95(int dof) {
  if (dof <= 0) return 0;
  if (dof <= 30) return kT95[dof - 1];
  return 1.96 + 2.4 / dof;  // within 0.002 of the exact value beyond 30
}

}  // namespace

bool IsGrowthOperation(std::string_view name) {
  return std::find(std::begin(kGrowthOperations), std::end(kGrowthOperations), name) !=
         std::end(kGrowthOperations);
}

double GrowthLevel::FillRatePerSecond() const {
  int64_t objects = runs_created + experiments_created + pipelines_created + versions_created;
  return fill_seconds > 0 ? static_cast<double>(objects) / fill_seconds : 0.0;
}

double PowerLawFit::At(double objects) const {
  return std::exp(intercept + exponent * std::log(objects));
}

std::string_view GrowthVerdict(double exponent) {
  if (exponent < 0.1) return "constant";
  if (exponent < 0.5) return "logarithmic";
  if (exponent < 1.25) return "linear";
  return "worse";
}

std::optional<PowerLawFit> FitPowerLaw(const std::vector<std::pair<double, double>>& points) {
  std::vector<std::pair<double, double>> logs;
  for (const auto& [x, y] : points) {
    if (x > 0 && y > 0 && std::isfinite(x) && std::isfinite(y)) {
      logs.emplace_back(std::log(x), std::log(y));
    }
  }
  const int n = static_cast<int>(logs.size());
  if (n < 2) return std::nullopt;
  double mean_x = 0, mean_y = 0;
  for (const auto& [x, y] : logs) {
    mean_x += x / n;
    mean_y += y / n;
  }
  double sxx = 0, sxy = 0, syy = 0;
  for (const auto& [x, y] : logs) {
    sxx += (x - mean_x) * (x - mean_x);
    sxy += (x - mean_x) * (y - mean_y);
    syy += (y - mean_y) * (y - mean_y);
  }
  if (sxx <= 0) return std::nullopt;  // every level stored as many objects
  PowerLawFit fit;
  fit.points = n;
  fit.exponent = sxy / sxx;
  fit.intercept = mean_y - fit.exponent * mean_x;
  double sse = 0;
  for (const auto& [x, y] : logs) {
    double r = y - (fit.intercept + fit.exponent * x);
    sse += r * r;
  }
  fit.r_squared = syy > 0 ? 1 - sse / syy : 1.0;
  if (n > 2) {
    double se = std::sqrt(sse / (n - 2) / sxx);
    double half = T95(n - 2) * se;
    fit.exponent_low = fit.exponent - half;
    fit.exponent_high = fit.exponent + half;
  }
  fit.verdict = std::string(GrowthVerdict(fit.exponent));
  return fit;
}

std::map<std::string, GrowthCurve::OperationFit> GrowthCurve::Fits() const {
  std::map<std::string, OperationFit> out;
  for (auto op : kGrowthOperations) {
    std::vector<std::pair<double, double>> p50, p99;
    for (const auto& level : levels) {
      auto it = level.latency_us.find(std::string(op));
      if (it == level.latency_us.end() || it->second.count() == 0) continue;
      double x = static_cast<double>(level.runs_stored);
      p50.emplace_back(x, static_cast<double>(it->second.ValueAtPercentile(50)));
      p99.emplace_back(x, static_cast<double>(it->second.ValueAtPercentile(99)));
    }
    OperationFit fit;
    fit.p50 = FitPowerLaw(p50);
    fit.p99 = FitPowerLaw(p99);
    if (!fit.p50 && !fit.p99) continue;
    if (fit.p99 && extrapolate_to > 0) {
      const double to = static_cast<double>(extrapolate_to);
      fit.p99_at_extrapolation = fit.p99->At(to);
      // Pivoted on the largest level: the interval's slopes from the last
      // point measured, which is where an extrapolation starts from.
      auto last = std::max_element(p99.begin(), p99.end());
      if (fit.p99->exponent_low && last != p99.end() && last->first > 0) {
        double ratio = to / last->first;
        double a = last->second * std::pow(ratio, *fit.p99->exponent_low);
        double b = last->second * std::pow(ratio, *fit.p99->exponent_high);
        fit.p99_at_extrapolation_low = std::min(a, b);
        fit.p99_at_extrapolation_high = std::max(a, b);
      }
    }
    out[std::string(op)] = std::move(fit);
  }
  return out;
}

}  // namespace kfpbench::results
