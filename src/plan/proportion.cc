#include "plan/proportion.h"

#include <algorithm>
#include <cmath>

namespace kfpbench::plan {

double TwoSidedZ(double confidence) {
  // P(|Z| > z) = erfc(z / sqrt 2) falls monotonically in z: bisect it.
  const double tail = 1 - std::clamp(confidence, 1e-12, 1 - 1e-12);
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    if (std::erfc(mid / std::sqrt(2.0)) > tail) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return (lo + hi) / 2;
}

Proportion WilsonInterval(int64_t hits, int64_t trials, double confidence) {
  Proportion p{hits, trials, 0, 1};
  if (trials <= 0) return p;
  const double n = static_cast<double>(trials);
  const double phat = static_cast<double>(hits) / n;
  const double z = TwoSidedZ(confidence);
  const double z2 = z * z;
  const double centre = (phat + z2 / (2 * n)) / (1 + z2 / n);
  const double half = z / (1 + z2 / n) * std::sqrt(phat * (1 - phat) / n + z2 / (4 * n * n));
  p.low = std::max(0.0, centre - half);
  p.high = std::min(1.0, centre + half);
  // At 0 or n hits the bound on that side is exact.
  if (hits == 0) p.low = 0;
  if (hits == trials) p.high = 1;
  return p;
}

}  // namespace kfpbench::plan
