#include "metrics/recorder.h"

namespace kfpbench::metrics {

Recorder::Recorder(WallTime start) : start_(start) {}

void Recorder::CloseWindow(Live& live) {
  if (live.window_second < 0 || live.window_latency.count() == 0) return;
  const Histogram& h = live.window_latency;
  live.stats.windows.push_back(Window{live.window_second, h.count(), live.window_errors,
                                      h.ValueAtPercentile(50), h.ValueAtPercentile(95),
                                      h.ValueAtPercentile(99), h.max()});
  live.window_latency.Reset();
  live.window_errors = 0;
}

void Recorder::RecordCall(std::string_view operation, Duration latency, int http_status,
                          WallTime completed_at) {
  int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(latency).count();
  bool error = IsErrorStatus(http_status);
  std::lock_guard lock(mu_);
  // Under the lock: Restart() moves the start.
  int64_t second =
      std::max<int64_t>(0, std::chrono::floor<std::chrono::seconds>(completed_at - start_).count());
  auto it = ops_.find(operation);
  if (it == ops_.end()) it = ops_.emplace(std::string(operation), Live{}).first;
  Live& live = it->second;
  live.stats.latency_us.Record(us);
  live.stats.by_status[http_status]++;
  if (error) live.stats.errors++;
  // Calls finish on several threads, so one can land just after its second
  // closed; it is counted in the open second rather than reopening the past.
  if (second > live.window_second) {
    CloseWindow(live);
    live.window_second = second;
  }
  live.window_latency.Record(us);
  if (error) live.window_errors++;
}

void OperationStats::AddErrorMessage(const std::string& message, uint64_t n) {
  auto it = error_messages.find(message);
  if (it != error_messages.end()) {
    it->second += n;
  } else if (error_messages.size() < kMaxErrorMessages) {
    error_messages.emplace(message, n);
  }
}

void Recorder::RecordError(std::string_view operation, const std::string& message,
                           int http_status) {
  std::lock_guard lock(mu_);
  auto it = ops_.find(operation);
  if (it == ops_.end()) it = ops_.emplace(std::string(operation), Live{}).first;
  it->second.stats.AddErrorMessage(message);
  if (!IsErrorStatus(http_status)) {
    it->second.stats.errors++;
    it->second.window_errors++;
  }
}

std::map<std::string, OperationStats> Recorder::Snapshot() const {
  std::lock_guard lock(mu_);
  std::map<std::string, OperationStats> out;
  for (const auto& [name, live] : ops_) {
    Live copy = live;
    CloseWindow(copy);
    out.emplace(name, std::move(copy.stats));
  }
  return out;
}

std::map<std::string, OperationStats> Recorder::Totals() const {
  std::lock_guard lock(mu_);
  std::map<std::string, OperationStats> out;
  for (const auto& [name, live] : ops_) {
    OperationStats& s = out[name];
    s.latency_us = live.stats.latency_us;
    s.errors = live.stats.errors;
    s.by_status = live.stats.by_status;
    s.error_messages = live.stats.error_messages;
  }
  return out;
}

std::map<std::string, OperationStats> Recorder::Restart(WallTime start) {
  std::map<std::string, OperationStats> out;
  std::lock_guard lock(mu_);
  for (auto& [name, live] : ops_) {
    OperationStats& s = out[name];
    s.latency_us = std::move(live.stats.latency_us);
    s.errors = live.stats.errors;
    s.by_status = std::move(live.stats.by_status);
    s.error_messages = std::move(live.stats.error_messages);
  }
  ops_.clear();
  start_ = start;
  return out;
}

WallTime Recorder::start() const {
  std::lock_guard lock(mu_);
  return start_;
}

}  // namespace kfpbench::metrics
