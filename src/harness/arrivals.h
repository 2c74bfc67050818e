// Open-loop arrival times, MLPerf LoadGen style: every run has an intended
// start fixed in advance, independent of how the server is doing, so a slow
// server cannot slow down the load it is measured with.
#pragma once

#include <random>

#include "util/time.h"

namespace kfpbench::harness {

class ArrivalSchedule {
 public:
  // `poisson`: exponential gaps with mean 60/rate seconds; else constant gaps.
  // `offset` (0..1) shifts a constant schedule by that fraction of a gap.
  ArrivalSchedule(WallTime start, double rate_per_minute, bool poisson, uint64_t seed,
                  double offset = 0);
  // The intended start of the next arrival.
  WallTime Next();

 private:
  WallTime next_;
  double mean_gap_s_;
  bool poisson_;
  std::mt19937_64 rng_;
  double elapsed_s_ = 0;  // summed in seconds, so rounding never accumulates
  WallTime start_;
};

}  // namespace kfpbench::harness
