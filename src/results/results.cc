#include "results/results.h"

#include "util/enum_names.h"
#include "util/secrets.h"

namespace kfpbench::results {
bool FullyCached(const RunRecord& run) {
  bool any = false;
  for (const auto& t : run.tasks) {
    if (t.dag) continue;
    if (!t.cached) return false;
    any = true;
  }
  return any;
}

std::optional<Duration> RunRecord::QueueWait() const {
  std::optional<WallTime> first;
  for (const auto& t : tasks) {
    if (t.dag || t.started.time_since_epoch().count() == 0) continue;
    if (!first || t.started < *first) first = t.started;
  }
  if (!first) return std::nullopt;
  return *first - created;
}

std::optional<Duration> RunRecord::StartDelay() const {
  if (intended.time_since_epoch().count() == 0) return std::nullopt;
  return submitted - intended;
}

std::optional<Duration> RunRecord::LatencyFromIntended() const {
  if (intended.time_since_epoch().count() == 0 || observed.time_since_epoch().count() == 0) {
    return std::nullopt;
  }
  return observed - intended;
}

std::optional<Duration> RunRecord::TriggerLag() const {
  if (scheduled.time_since_epoch().count() == 0 || created.time_since_epoch().count() == 0) {
    return std::nullopt;
  }
  return created - scheduled;
}

void RunLog::Add(RunRecord record) {
  bool late = false;
  if (auto d = record.StartDelay(); d && *d > BenchmarkResults::kLateStart) late = true;
  std::string state(RuntimeStateName(record.state));
  std::lock_guard lock(mu_);
  by_state_[state]++;
  if (late) ++late_starts_;
  if (record.run_id.empty() && record.recurring_run_id.empty()) ++not_created_;
  records_.push_back(std::move(record));
}

void BenchmarkResults::RedactSecrets() {
  for (auto& r : runs) r.error = Redact(r.error);
  for (auto& e : errors) e = Redact(e);
  for (auto& c : cleanup_failures) c = Redact(c);
  partial_reason = Redact(partial_reason);
  for (auto& g : growth) g.stopped_because = Redact(g.stopped_because);
  for (auto& [name, op] : operations) {
    std::map<std::string, uint64_t> messages;
    for (auto& [message, n] : op.error_messages) messages[Redact(message)] += n;
    op.error_messages = std::move(messages);
  }
}

size_t RunLog::NotCreated() const {
  std::lock_guard lock(mu_);
  return not_created_;
}

size_t RunLog::size() const {
  std::lock_guard lock(mu_);
  return records_.size();
}

std::map<std::string, int> RunLog::CountByState() const {
  std::lock_guard lock(mu_);
  return by_state_;
}

int RunLog::LateStarts() const {
  std::lock_guard lock(mu_);
  return late_starts_;
}

std::vector<RunRecord> RunLog::Records() const {
  std::lock_guard lock(mu_);
  return records_;
}

uint64_t BenchmarkResults::ApiCalls() const {
  uint64_t n = 0;
  for (const auto& [name, op] : operations) n += op.latency_us.count();
  return n;
}

metrics::Histogram BenchmarkResults::RunDurationsMs() const {
  metrics::Histogram h;
  for (const auto& r : runs) {
    if (r.Finished()) h.Record(ToMillis(r.RunDuration()));
  }
  return h;
}

metrics::Histogram BenchmarkResults::QueueWaitsMs() const {
  metrics::Histogram h;
  for (const auto& r : runs) {
    if (auto w = r.QueueWait()) h.Record(ToMillis(*w));
  }
  return h;
}

metrics::Histogram BenchmarkResults::StartDelaysMs() const {
  metrics::Histogram h;
  for (const auto& r : runs) {
    if (auto d = r.StartDelay()) h.Record(ToMillis(*d));
  }
  return h;
}

double BenchmarkResults::StressPeakPerMinute(size_t scenario) const {
  double peak = 0;
  for (const auto& s : stress_steps) {
    if (s.scenario == scenario && s.held) peak = std::max(peak, s.rate_per_minute);
  }
  return peak;
}

metrics::Histogram BenchmarkResults::TriggerLagsMs() const {
  metrics::Histogram h;
  for (const auto& r : runs) {
    if (auto d = r.TriggerLag(); d && !r.recurring_run_id.empty()) h.Record(ToMillis(*d));
  }
  return h;
}

int BenchmarkResults::LateStarts() const {
  int late = 0;
  for (const auto& r : runs) {
    if (auto d = r.StartDelay(); d && *d > kLateStart) ++late;
  }
  return late;
}

std::map<std::string, StepStats> BenchmarkResults::Steps() const {
  std::map<std::string, StepStats> out;
  for (const auto& r : runs) {
    for (const auto& t : r.tasks) {
      if (t.dag || t.started.time_since_epoch().count() == 0) continue;
      auto& s = out[t.name];
      s.scheduling_delay_ms.Record(ToMillis(t.started - t.created));
      if (t.finished.time_since_epoch().count() != 0)
        s.duration_ms.Record(ToMillis(t.finished - t.started));
    }
  }
  return out;
}

std::map<std::string, StepThroughput> BenchmarkResults::ArtifactThroughput() const {
  std::map<std::string, StepThroughput> out;
  for (const auto& r : runs) {
    if (r.scenario >= scenarios.size() || scenarios[r.scenario].artifact_bytes <= 0) continue;
    int64_t bytes = scenarios[r.scenario].artifact_bytes;
    for (const auto& t : r.tasks) {
      if (t.dag || t.state != RuntimeState::kSucceeded) continue;
      double seconds = ToSeconds(t.finished - t.started);
      if (seconds <= 0) continue;
      auto& step = out[t.name];
      step.artifact_bytes = bytes;
      step.kib_per_s.Record(static_cast<int64_t>(bytes / 1024.0 / seconds));
    }
  }
  return out;
}

std::map<std::string, int> BenchmarkResults::RunsByState() const {
  std::map<std::string, int> out;
  for (const auto& r : runs) out[std::string(RuntimeStateName(r.state))]++;
  return out;
}

namespace {
constexpr EnumName<StressStopReason> kStressStopNames[] = {
    {StressStopReason::kSloBroken, "slo_broken"},
    {StressStopReason::kRunTimeReached, "runtime_reached"},
    {StressStopReason::kMaxRateReached, "max_rate_reached"},
    {StressStopReason::kInterrupted, "interrupted"},
};
}  // namespace

std::string_view StressStopReasonName(StressStopReason reason) {
  return NameIn(kStressStopNames, reason, "unknown");
}

std::optional<StressStopReason> ParseStressStopReason(std::string_view name) {
  return ValueIn(kStressStopNames, name);
}

uint64_t ObserverSummary::Calls() const {
  uint64_t n = 0;
  for (const auto& [name, op] : operations) n += op.latency_us.count();
  return n;
}

}  // namespace kfpbench::results
