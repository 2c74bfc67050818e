#include "util/percentile.h"

#include <algorithm>
#include <cmath>

namespace kfpbench {

size_t NearestRank(size_t count, double share) {
  if (count == 0) return 0;
  if (!(share > 0)) return 1;
  if (share >= 1) return count;
  constexpr double kRelativeTolerance = 1e-12;
  const double product = share * static_cast<double>(count);
  const double nearest = std::round(product);
  const double rank =
      std::abs(product - nearest) <= kRelativeTolerance * nearest ? nearest : std::ceil(product);
  return std::clamp(static_cast<size_t>(rank), size_t{1}, count);
}

double Percentile(std::vector<double> values, double percent) {
  if (values.empty()) return 0;
  const size_t rank = NearestRank(values.size(), percent / 100);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                   values.end());
  return values[rank - 1];
}

}  // namespace kfpbench
