// The most calls a second a capture may ask of a production server: each
// call waits for its turn, spaced evenly, so a burst never exceeds it.
#pragma once

#include <atomic>

#include "util/time.h"

namespace kfpbench::capture {

class QpsBudget {
 public:
  // `qps` <= 0: no limit.
  explicit QpsBudget(double qps) : qps_(qps) {}
  // Waits until the next call may start; false when `stop` was set meanwhile.
  bool Wait(const std::atomic<bool>* stop);
  double qps() const { return qps_; }

 private:
  double qps_;
  std::chrono::steady_clock::time_point next_{};
};

}  // namespace kfpbench::capture
