#include "report/merge.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kfpbench::report {
namespace {

using results::BenchmarkResults;

bool IsSet(WallTime t) { return t.time_since_epoch().count() != 0; }

void MergeWindows(std::vector<metrics::Window>& into, const std::vector<metrics::Window>& from,
                  int64_t shift_s) {
  std::map<int64_t, metrics::Window> by_second;
  for (const auto& w : into) by_second[w.second] = w;
  for (metrics::Window w : from) {
    w.second += shift_s;
    auto [it, inserted] = by_second.try_emplace(w.second, w);
    if (inserted) continue;
    metrics::Window& m = it->second;
    m.count += w.count;
    m.errors += w.errors;
    m.p50_us = std::max(m.p50_us, w.p50_us);
    m.p95_us = std::max(m.p95_us, w.p95_us);
    m.p99_us = std::max(m.p99_us, w.p99_us);
    m.max_us = std::max(m.max_us, w.max_us);
  }
  into.clear();
  for (auto& [second, w] : by_second) into.push_back(w);
}

// Each operation's histograms, counts and windows added; a part's windows
// move by its start's offset (`shift_s`) from the merged start.
void MergeOperations(std::map<std::string, metrics::OperationStats>& into,
                     const std::map<std::string, metrics::OperationStats>& from, int64_t shift_s) {
  for (const auto& [name, op] : from) {
    metrics::OperationStats& m = into[name];
    m.latency_us.Merge(op.latency_us);
    m.errors += op.errors;
    for (const auto& [status, n] : op.by_status) m.by_status[status] += n;
    for (const auto& [message, n] : op.error_messages) m.AddErrorMessage(message, n);
    MergeWindows(m.windows, op.windows, shift_s);
  }
}

// The observer's calls add up over parts (shards, repetitions); the budget is
// the first part's.
void MergeObserver(results::ObserverSummary& o, const results::ObserverSummary& p,
                   int64_t shift_s) {
  if (o.qps_budget == 0) o.qps_budget = p.qps_budget;
  if (o.poll_interval == Duration::zero()) o.poll_interval = p.poll_interval;
  MergeOperations(o.operations, p.operations, shift_s);
  o.list_sweeps += p.list_sweeps;
  o.runs_by_listing += p.runs_by_listing;
  o.runs_by_polling += p.runs_by_polling;
  if (o.polling_reason.empty()) o.polling_reason = p.polling_reason;
  o.observe_lag_ms.Merge(p.observe_lag_ms);
  o.budget_wait += p.budget_wait;
}

// kfpbench's own use and the target's back-pressure add up too.
void MergeHarnessUsage(results::HarnessUsage& u, const results::HarnessUsage& p) {
  u.wall_s += p.wall_s;
  u.cpu_user_s += p.cpu_user_s;
  u.cpu_system_s += p.cpu_system_s;
  u.peak_rss_bytes = std::max(u.peak_rss_bytes, p.peak_rss_bytes);
  u.rss_bytes = std::max(u.rss_bytes, p.rss_bytes);
  u.threads = std::max(u.threads, p.threads);
}

void MergeBackPressure(results::BackPressure& into, const results::BackPressure& p) {
  into.waits += p.waits;
  into.waited += p.waited;
  into.not_resent += p.not_resent;
  for (const auto& [op, n] : p.by_operation) into.by_operation[op] += n;
}

// Adds each item of `from` to `into`: merged into the one with the same
// key, or appended when there is none.
template <typename T, typename Key, typename MergeFn>
void MergeByKey(std::vector<T>& into, const std::vector<T>& from, Key T::*key, MergeFn merge) {
  for (const T& item : from) {
    auto same =
        std::find_if(into.begin(), into.end(), [&](const T& o) { return o.*key == item.*key; });
    if (same == into.end()) {
      into.push_back(item);
    } else {
      merge(*same, item);
    }
  }
}

// Growth is never sharded (ApplyShard refuses it); the same scenario in two
// parts (repetitions) adds its histograms level by level.
void MergeGrowth(std::vector<results::GrowthCurve>& into,
                 const std::vector<results::GrowthCurve>& from) {
  MergeByKey(into, from, &results::GrowthCurve::scenario, [](auto& same, const auto& curve) {
    MergeByKey(same.levels, curve.levels, &results::GrowthLevel::target_runs,
               [](auto& at, const auto& level) {
                 for (const auto& [op, h] : level.latency_us) at.latency_us[op].Merge(h);
                 for (const auto& [op, n] : level.errors) at.errors[op] += n;
               });
  });
}

// Shards of one schedule scenario add up: fires owed and made.
void MergeSchedules(std::vector<results::ScheduleSummary>& into,
                    const std::vector<results::ScheduleSummary>& from) {
  MergeByKey(into, from, &results::ScheduleSummary::scenario, [](auto& same, const auto& s) {
    same.recurring_runs += s.recurring_runs;
    same.expected_fires += s.expected_fires;
    same.observed_fires += s.observed_fires;
  });
}

// The merged window: the earliest start and the latest finish set.
void MergeTimes(BenchmarkResults& out, const std::vector<BenchmarkResults>& parts) {
  for (const auto& p : parts) {
    if (IsSet(p.started) && (!IsSet(out.started) || p.started < out.started)) {
      out.started = p.started;
    }
    if (IsSet(p.finished) && (!IsSet(out.finished) || p.finished > out.finished)) {
      out.finished = p.finished;
    }
  }
}

// What the benchmark created and deleted, and whether it kept it. Shards of
// one benchmark share no id; the merge names them all.
void MergeObjects(BenchmarkResults& out, const BenchmarkResults& p) {
  for (auto [to, from] :
       {std::pair{&out.created, &p.created}, std::pair{&out.deleted, &p.deleted}}) {
    to->pipelines += from->pipelines;
    to->experiments += from->experiments;
    to->runs += from->runs;
    to->recurring_runs += from->recurring_runs;
  }
  out.kept = out.kept || p.kept;
  if (out.benchmark_id.find(p.benchmark_id) == std::string::npos) {
    out.benchmark_id += (out.benchmark_id.empty() ? "" : " ") + p.benchmark_id;
  }
}

template <typename T>
void Append(std::vector<T>& into, const std::vector<T>& from) {
  into.insert(into.end(), from.begin(), from.end());
}

}  // namespace

Result<BenchmarkResults> MergeResults(const std::vector<BenchmarkResults>& parts) {
  if (parts.empty()) return Error{"nothing to merge"};
  BenchmarkResults out;
  const BenchmarkResults& first = parts.front();
  out.kfpbench_version = first.kfpbench_version;
  out.target = first.target;
  out.scenario_path = first.scenario_path;
  out.scenario_source = first.scenario_source;
  MergeTimes(out, parts);
  for (const auto& p : parts) {
    if (p.partial) {
      out.partial = true;
      if (!p.partial_reason.empty()) {
        if (!out.partial_reason.empty()) out.partial_reason += "; ";
        out.partial_reason += p.partial_reason;
      }
    }
    // Whole seconds: windows are whole seconds from each part's own start.
    int64_t shift_s = IsSet(p.started) && IsSet(out.started)
                          ? std::llround(ToSeconds(p.started - out.started))
                          : 0;
    MergeOperations(out.operations, p.operations, shift_s);
    Append(out.runs, p.runs);
    Append(out.errors, p.errors);
    Append(out.cleanup_failures, p.cleanup_failures);
    out.resent_requests += p.resent_requests;
    MergeObjects(out, p);
    MergeObserver(out.observer, p.observer, shift_s);
    MergeHarnessUsage(out.harness_usage, p.harness_usage);
    MergeBackPressure(out.back_pressure, p.back_pressure);
    Append(out.stress_steps, p.stress_steps);
    Append(out.stress_stops, p.stress_stops);
    MergeGrowth(out.growth, p.growth);
    MergeSchedules(out.schedules, p.schedules);
    for (const auto& c : p.collectors) out.collectors.push_back(c);
    out.pod_lifecycle.Merge(p.pod_lifecycle);
    if (out.scenarios.empty()) out.scenarios = p.scenarios;
  }
  // The merged result stands for the whole load, not one shard of it.
  out.shard_index = 0;
  out.shard_count = 1;
  return out;
}

}  // namespace kfpbench::report
