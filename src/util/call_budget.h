// At most `qps` calls a second to a target, spaced evenly (no bursts): each
// caller reserves the next free slot and sleeps until it. One budget serves
// the benchmark's run followers (--observer-qps), capture (--qps) and
// cleanup (--qps), so that kfpbench never asks more of a production server
// than it was allowed, whoever asks.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>

#include "util/time.h"

namespace kfpbench {

class CallBudget {
 public:
  explicit CallBudget(double qps);  // <= 0: unlimited
  // Waits for a slot. False when the slot would come after `until` (nothing
  // is reserved then) or when `stop()` says so while waiting (checked every
  // 50 ms, so that Ctrl-C is seen at any budget). Unused slots are not saved
  // up: after a pause the next call starts at once, and then they are spaced.
  bool Acquire(WallTime until = WallTime::max(), const std::function<bool()>& stop = nullptr);
  // The time callers spent waiting for their slots, summed.
  Duration waited() const { return Duration(waited_ns_.load(std::memory_order_relaxed)); }
  double qps() const { return qps_; }

 private:
  double qps_;
  std::chrono::steady_clock::duration spacing_{};
  std::mutex mu_;
  std::chrono::steady_clock::time_point next_{};
  std::atomic<int64_t> waited_ns_{0};
};

}  // namespace kfpbench
