// Nearest-rank percentiles: the one definition every part uses, so a p95 in
// a profile, a plan and a comparison is the same sample of the same data.
#pragma once

#include <cstddef>
#include <vector>

namespace kfpbench {

// The 1-based rank of the nearest-rank `share` quantile of `count` sorted
// values: ceil(share x count), the smallest rank with at least that share of
// the values at or below it. Always a sample, never interpolated.
//
// At the edges: no values -> 0 (no rank); share <= 0 (or NaN) -> 1, the
// minimum; share >= 1 -> count, the maximum; one value -> 1.
//
// share x count within a relative 1e-12 of an integer k counts as k. The
// shares callers write (0.95, 7%, a 2.5% bootstrap tail) are rarely exact in
// binary, and a plain ceil would take the next rank up when the product
// lands a few ulps above k (0.07 x 100 = 7.000000000000001). The tolerance is
// thousands of ulps, and below the gap between the product and any integer for
// shares of up to six decimals over up to a million values.
size_t NearestRank(size_t count, double share);

// The nearest-rank `percent` percentile (0..100, clamped) of unsorted
// `values`; 0 when there are none.
double Percentile(std::vector<double> values, double percent);

}  // namespace kfpbench
