#include "capture/qps_budget.h"

#include <algorithm>
#include <thread>

namespace kfpbench::capture {

bool QpsBudget::Wait(const std::atomic<bool>* stop) {
  if (qps_ <= 0) return !(stop && stop->load());
  const auto now = std::chrono::steady_clock::now();
  // Unused turns are not saved up: after a pause the next call starts now.
  next_ = std::max(next_, now);
  // Sleeps in slices so that Ctrl-C is seen within 50 ms at any budget.
  while (std::chrono::steady_clock::now() < next_) {
    if (stop && stop->load()) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        next_ - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
  }
  next_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(1.0 / qps_));
  return !(stop && stop->load());
}

}  // namespace kfpbench::capture
