// A fraction measured over independent trials, with its confidence interval:
// "of the replications, what share finished within T".
//
// The interval is Wilson's score interval. Unlike the normal approximation it
// stays inside [0, 1] and is not degenerate at 0 or n hits (20 of 20 gives
// 84%-100% at 95%, not 100%-100%), and unlike Clopper-Pearson it needs no
// inverse beta function; its coverage is close to nominal for n >= 10.
#pragma once

#include <cstdint>

namespace kfpbench::plan {

struct Proportion {
  int64_t hits = 0;
  int64_t trials = 0;
  double low = 0;  // the interval's bounds, in [0, 1]
  double high = 1;
  double Estimate() const {
    return trials > 0 ? static_cast<double>(hits) / static_cast<double>(trials) : 0;
  }
};

// The two-sided Wilson score interval of hits / trials at `confidence`
// (0.95: 95%); [0, 1] with no trials.
Proportion WilsonInterval(int64_t hits, int64_t trials, double confidence);

// The standard normal quantile z with P(|Z| <= z) = confidence (1.96 at 0.95).
double TwoSidedZ(double confidence);

}  // namespace kfpbench::plan
