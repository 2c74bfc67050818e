#include "harness/follower_calls.h"

#include <thread>

#include "harness/harness.h"

namespace kfpbench::harness {

FollowerCalls::FollowerCalls(const kfp::Client& client, double qps, Duration poll_interval)
    : calls_(WallClock::now()),
      recording_(std::make_unique<CallRecorder>(calls_)),
      client_(std::make_unique<kfp::Client>(client.ReportingTo(recording_.get()))),
      budget_(qps),
      poll_interval_(poll_interval) {}

FollowerCalls::~FollowerCalls() = default;

void FollowerCalls::CountEnded(const results::RunRecord& record, bool by_listing) {
  std::lock_guard lock(mu_);
  ++(by_listing ? by_listing_ : by_polling_);
  if (record.Finished() && record.observed.time_since_epoch().count() != 0) {
    lag_ms_.Record(std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(record.observed - record.finished)
               .count()));
  }
}

void FollowerCalls::NotePolling(const std::string& reason) {
  std::lock_guard lock(mu_);
  if (polling_reason_.empty()) polling_reason_ = reason;
}

std::map<std::string, uint64_t> FollowerCalls::CallCounts() const {
  std::map<std::string, uint64_t> counts;
  for (const auto& [name, op] : calls_.Totals()) counts[name] = op.latency_us.count();
  return counts;
}

results::ObserverSummary FollowerCalls::Summary() const {
  results::ObserverSummary s;
  s.qps_budget = budget_.qps();
  s.poll_interval = poll_interval_;
  s.operations = calls_.Snapshot();
  s.list_sweeps = sweeps_.load(std::memory_order_relaxed);
  s.budget_wait = budget_.waited();
  std::lock_guard lock(mu_);
  s.runs_by_listing = by_listing_;
  s.runs_by_polling = by_polling_;
  s.polling_reason = polling_reason_;
  s.observe_lag_ms = lag_ms_;
  return s;
}

}  // namespace kfpbench::harness
