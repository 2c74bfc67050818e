// Duration models fitted to observed samples: empirical quantiles, and a
// lognormal by maximum likelihood with the Kolmogorov-Smirnov distance
// between the two as its goodness of fit.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace kfpbench::capture {

struct LognormalFit {
  double median = 0;  // exp(mean of ln x), seconds
  double sigma = 0;   // standard deviation of ln x
  // sup |empirical CDF - fitted CDF|. The parameters come from the same
  // samples, so the classical KS p-value does not apply (Lilliefors); D is
  // reported as a distance: below about 0.886/sqrt(n) the fit is not
  // distinguishable from the samples at the 5% level.
  double ks_d = 0;
  size_t n = 0;
};

// Samples in seconds; those at or below zero are left out (a lognormal has
// none). n = 0 when fewer than two remain.
LognormalFit FitLognormal(std::vector<double> seconds);

// The fitted lognormal's CDF at x seconds.
double LognormalCdf(const LognormalFit& fit, double x);

// The two-sample Kolmogorov-Smirnov test: D = sup |F_a - F_b| and its
// asymptotic p-value (Kolmogorov's distribution at Stephens' corrected
// sqrt(n_e) D, n_e = n m / (n + m)), the chance of a D this large were both
// samples drawn from one distribution. Good from about 20 samples a side.
struct KsTwoSample {
  double d = 0;
  double p = 1;
};
KsTwoSample TwoSampleKs(std::vector<double> a, std::vector<double> b);

// {"n", "min", "p05", "p25", "p50", "p75", "p90", "p95", "p99", "max", "mean"}
// of the samples (nearest rank); {"n": 0} when there are none.
nlohmann::json Quantiles(const std::vector<double>& seconds);

}  // namespace kfpbench::capture
