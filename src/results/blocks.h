// The test `compare` uses when repetitions differ from one another: each
// repetition is a block, and repetition k of the candidate is set against
// repetition k of the baseline (they ran at the same place in `--repeat`'s
// sequence, on the same accumulated state). What is tested is the log of
// their ratio, one value per block: a one-sample t test of its mean against
// 0. Whatever made the repetitions differ cancels where both sides share it
// (a ListRuns that slows as the runs stored grow from one repetition to the
// next), and where it does not, it widens the ratios' spread, which the t
// test counts: either way the calls of one repetition are never taken as
// independent of another's.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "results/stats.h"

namespace kfpbench::results {

struct BlockedChange {
  double change = 0;  // exp(mean log ratio) - 1: the typical block's change
  Interval interval;  // of `change`, from the t interval of the mean log ratio
  double p = 1;       // two-sided
  double spread = 0;  // the log ratios' sample standard deviation
  size_t blocks = 0;
  double error = 0;  // standard error of the mean log ratio
  double df = 0;     // the t distribution's degrees of freedom
};

// `baseline[k]` and `candidate[k]` are block k's figure on each side (a p95,
// a mean), all above zero, as many on each side; with fewer than 2 blocks,
// p = 1 and no change.
BlockedChange BlockedLogRatioTest(const std::vector<double>& baseline,
                                  const std::vector<double>& candidate, double confidence);

// The test's power, stated as a size: the smallest slowdown d (every block's
// value times 1 + d) it finds with probability `power` at `alpha`, for
// `blocks` blocks whose log ratios spread by `spread` (their standard
// deviation), from the noncentral t. Infinity with fewer than 2 blocks; 0
// when the ratios do not spread at all.
double BlockedDetectableChange(double spread, size_t blocks, double alpha, double power = 0.8);

// The same questions when the two sides are not paired (they ran different
// numbers of repetitions): Welch's t test of the difference of the sides'
// mean logs, one value per repetition. The change is the ratio of their
// geometric means less 1, its interval the Welch t interval; `blocks` is 0,
// `error` and `df` (Welch-Satterthwaite) are set. With fewer than 2 values
// on a side, or one not above zero: p = 1, no change, df 0.
BlockedChange WelchLogRatioTest(const std::vector<double>& baseline,
                                const std::vector<double>& candidate, double confidence);

// The smallest slowdown a two-sided t test at `alpha` with `df` degrees of
// freedom finds with probability `power` when its estimate of log(1 + d) has
// standard error `error` (from the noncentral t). Infinity when df < 1; 0
// when error is 0.
double DetectableLogShift(double error, double df, double alpha, double power = 0.8);

}  // namespace kfpbench::results
