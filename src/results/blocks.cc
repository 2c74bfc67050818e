#include "results/blocks.h"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/non_central_t.hpp>
#include <boost/math/distributions/students_t.hpp>

namespace kfpbench::results {
namespace {

// In double throughout. Boost's default promotes to long double, whose
// tables it fills at start-up in every program linking this part, and which
// valgrind cannot emulate (the start-up then throws and aborts).
using NoPromotion = boost::math::policies::policy<boost::math::policies::promote_float<false>,
                                                  boost::math::policies::promote_double<false>>;
using StudentsT = boost::math::students_t_distribution<double, NoPromotion>;
using NoncentralT = boost::math::non_central_t_distribution<double, NoPromotion>;

// P(|T| > critical) for T noncentral t with `df` and `shift`: the power of the
// two-sided test at that true mean.
double PowerAt(double df, double shift, double critical) {
  NoncentralT t(df, shift);
  return boost::math::cdf(boost::math::complement(t, critical)) + boost::math::cdf(t, -critical);
}

}  // namespace

double DetectableLogShift(double error, double df, double alpha, double power) {
  if (!(df >= 1)) return std::numeric_limits<double>::infinity();
  if (error == 0) return 0;
  StudentsT t(df);
  const double critical = boost::math::quantile(boost::math::complement(t, alpha / 2));
  // The mean log ratio (in standard errors) at which the test reaches
  // `power`: bisection on the noncentral t's shift, which power rises with,
  // to a thousandth of it (each step costs a noncentral t, the slow part).
  double lo = 0, hi = 1;
  while (PowerAt(df, hi, critical) < power) {
    lo = hi;
    hi *= 2;
    if (hi > 1e6) return std::numeric_limits<double>::infinity();
  }
  while (hi - lo > 1e-3 * hi) {
    double mid = (lo + hi) / 2;
    (PowerAt(df, mid, critical) < power ? lo : hi) = mid;
  }
  return std::expm1(hi * error);
}

double BlockedDetectableChange(double spread, size_t blocks, double alpha, double power) {
  if (blocks < 2) return std::numeric_limits<double>::infinity();
  const double n = static_cast<double>(blocks);
  return DetectableLogShift(spread / std::sqrt(n), n - 1, alpha, power);
}

BlockedChange WelchLogRatioTest(const std::vector<double>& baseline,
                                const std::vector<double>& candidate, double confidence) {
  BlockedChange out;
  if (baseline.size() < 2 || candidate.size() < 2) return out;
  auto logs = [](const std::vector<double>& v, std::vector<double>& into) {
    for (double x : v) {
      if (!(x > 0)) return false;
      into.push_back(std::log(x));
    }
    return true;
  };
  std::vector<double> a, b;
  if (!logs(baseline, a) || !logs(candidate, b)) return out;
  auto variance = [](const std::vector<double>& v, double mean) {
    double squares = 0;
    for (double x : v) squares += (x - mean) * (x - mean);
    return squares / static_cast<double>(v.size() - 1);
  };
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  const double ma = Mean(a), mb = Mean(b);
  const double va = variance(a, ma) / na, vb = variance(b, mb) / nb;
  const double diff = mb - ma;
  out.change = std::expm1(diff);
  out.error = std::sqrt(va + vb);
  out.spread = std::sqrt(variance(a, ma) + variance(b, mb));
  if (out.error == 0) {
    out.df = na + nb - 2;
    out.interval = {out.change, out.change};
    out.p = diff == 0 ? 1 : 0;
    return out;
  }
  out.df = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1));
  StudentsT t(out.df);
  const double half = boost::math::quantile(boost::math::complement(t, (1 - confidence) / 2));
  out.interval = {std::expm1(diff - half * out.error), std::expm1(diff + half * out.error)};
  out.p = 2 * boost::math::cdf(boost::math::complement(t, std::abs(diff) / out.error));
  return out;
}

BlockedChange BlockedLogRatioTest(const std::vector<double>& baseline,
                                  const std::vector<double>& candidate, double confidence) {
  BlockedChange out;
  if (baseline.size() != candidate.size() || baseline.size() < 2) return out;
  std::vector<double> ratios;
  for (size_t k = 0; k < baseline.size(); ++k) {
    if (!(baseline[k] > 0 && candidate[k] > 0)) return out;
    ratios.push_back(std::log(candidate[k] / baseline[k]));
  }
  out.blocks = ratios.size();
  const double n = static_cast<double>(ratios.size()), df = n - 1;
  const double mean = Mean(ratios);
  double squares = 0;
  for (double r : ratios) squares += (r - mean) * (r - mean);
  const double error = std::sqrt(squares / df / n);  // of the mean
  out.change = std::expm1(mean);
  out.spread = std::sqrt(squares / df);
  out.error = error;
  out.df = df;
  StudentsT t(df);
  const double half = boost::math::quantile(boost::math::complement(t, (1 - confidence) / 2));
  out.interval = {std::expm1(mean - half * error), std::expm1(mean + half * error)};
  if (error == 0) {  // every block changed by exactly as much
    out.p = mean == 0 ? 1 : 0;
    return out;
  }
  out.p = 2 * boost::math::cdf(boost::math::complement(t, std::abs(mean) / error));
  return out;
}

}  // namespace kfpbench::results
