#include "harness/arrivals.h"

namespace kfpbench::harness {

ArrivalSchedule::ArrivalSchedule(WallTime start, double rate_per_minute, bool poisson,
                                 uint64_t seed, double offset)
    : mean_gap_s_(60.0 / rate_per_minute), poisson_(poisson), rng_(seed), start_(start) {
  if (!poisson_) elapsed_s_ = offset * mean_gap_s_;
  next_ = start_ + std::chrono::duration_cast<WallClock::duration>(
                       std::chrono::duration<double>(elapsed_s_));
}

WallTime ArrivalSchedule::Next() {
  WallTime t = next_;
  double gap =
      poisson_ ? std::exponential_distribution<double>(1.0 / mean_gap_s_)(rng_) : mean_gap_s_;
  elapsed_s_ += gap;
  next_ = start_ + std::chrono::duration_cast<WallClock::duration>(
                       std::chrono::duration<double>(elapsed_s_));
  return t;
}

}  // namespace kfpbench::harness
