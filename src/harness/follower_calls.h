// What the benchmark itself asks of the target to follow its runs: one
// FollowerCalls per pass of a scenario file, shared by every run follower. Its
// calls go through a client of their own, recorded apart from the workload's
// (results.json "observer"), and through one budget (--observer-qps) that all
// of them together never exceed.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

#include "kfp/client.h"
#include "metrics/recorder.h"
#include "results/results.h"
#include "util/call_budget.h"
#include "util/time.h"

namespace kfpbench::harness {

class CallRecorder;  // harness/harness.h

class FollowerCalls {
 public:
  // `client` is the workload's; the observer reports a copy of it to its own
  // recorder.
  FollowerCalls(const kfp::Client& client, double qps, Duration poll_interval);
  FollowerCalls(const FollowerCalls&) = delete;
  FollowerCalls& operator=(const FollowerCalls&) = delete;
  ~FollowerCalls();

  kfp::Client& client() { return *client_; }
  CallBudget& budget() { return budget_; }

  void CountSweep() { sweeps_.fetch_add(1, std::memory_order_relaxed); }
  // A run recorded as finished: `by_listing` says how its end was found.
  void CountEnded(const results::RunRecord& record, bool by_listing);
  // Why some runs are polled one by one (the first reason given is kept).
  void NotePolling(const std::string& reason);

  results::ObserverSummary Summary() const;
  // The observer's calls so far by operation: cheap enough for every
  // progress tick (no time series).
  std::map<std::string, uint64_t> CallCounts() const;

 private:
  metrics::Recorder calls_;
  std::unique_ptr<CallRecorder> recording_;  // harness/harness.h
  std::unique_ptr<kfp::Client> client_;
  CallBudget budget_;
  Duration poll_interval_;
  std::atomic<uint64_t> sweeps_{0};
  mutable std::mutex mu_;
  uint64_t by_listing_ = 0, by_polling_ = 0;
  std::string polling_reason_;
  metrics::Histogram lag_ms_;
};

}  // namespace kfpbench::harness
