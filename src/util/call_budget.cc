#include "util/call_budget.h"

#include <algorithm>
#include <thread>

namespace kfpbench {

CallBudget::CallBudget(double qps) : qps_(qps) {
  if (qps > 0) {
    spacing_ = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(1.0 / qps));
  }
}

bool CallBudget::Acquire(WallTime until, const std::function<bool()>& stop) {
  auto stopped = [&] { return stop && stop(); };
  if (qps_ <= 0) return !stopped();
  const auto now = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point slot;
  {
    std::lock_guard lock(mu_);
    slot = std::max(now, next_);
    if (until != WallTime::max() && WallClock::now() + (slot - now) > until) return false;
    next_ = slot + spacing_;
  }
  if (slot > now) {
    waited_ns_.fetch_add(std::chrono::duration_cast<Duration>(slot - now).count(),
                         std::memory_order_relaxed);
  }
  for (auto left = slot - std::chrono::steady_clock::now(); left > left.zero();
       left = slot - std::chrono::steady_clock::now()) {
    if (stopped()) return false;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(50)));
  }
  return !stopped();
}

}  // namespace kfpbench
