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

}  // namespace

Result<BenchmarkResults> MergeResults(const std::vector<BenchmarkResults>& parts) {
  if (parts.empty()) return Error{"nothing to merge"};
  BenchmarkResults out;
  const BenchmarkResults& first = parts.front();
  out.kfpbench_version = first.kfpbench_version;
  out.target = first.target;
  out.scenario_path = first.scenario_path;
  out.scenario_source = first.scenario_source;
  for (const auto& p : parts) {
    if (IsSet(p.started) && (!IsSet(out.started) || p.started < out.started)) {
      out.started = p.started;
    }
    if (IsSet(p.finished) && (!IsSet(out.finished) || p.finished > out.finished)) {
      out.finished = p.finished;
    }
  }
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
    for (const auto& [name, op] : p.operations) {
      metrics::OperationStats& m = out.operations[name];
      m.latency_us.Merge(op.latency_us);
      m.errors += op.errors;
      for (const auto& [status, n] : op.by_status) m.by_status[status] += n;
      for (const auto& [message, n] : op.error_messages) m.AddErrorMessage(message, n);
      MergeWindows(m.windows, op.windows, shift_s);
    }
    out.runs.insert(out.runs.end(), p.runs.begin(), p.runs.end());
    out.errors.insert(out.errors.end(), p.errors.begin(), p.errors.end());
    out.cleanup_failures.insert(out.cleanup_failures.end(), p.cleanup_failures.begin(),
                                p.cleanup_failures.end());
    out.resent_requests += p.resent_requests;
    for (auto [to, from] :
         {std::pair{&out.created, &p.created}, std::pair{&out.deleted, &p.deleted}}) {
      to->pipelines += from->pipelines;
      to->experiments += from->experiments;
      to->runs += from->runs;
      to->recurring_runs += from->recurring_runs;
    }
    out.kept = out.kept || p.kept;
    // Shards of one benchmark share no id; the merge names them all.
    if (out.benchmark_id.find(p.benchmark_id) == std::string::npos) {
      out.benchmark_id += (out.benchmark_id.empty() ? "" : " ") + p.benchmark_id;
    }
    // The observer's calls, kfpbench's own use and the target's back-pressure
    // add up over parts (shards, repetitions); the budget is the first part's.
    results::ObserverSummary& o = out.observer;
    if (o.qps_budget == 0) o.qps_budget = p.observer.qps_budget;
    if (o.poll_interval == Duration::zero()) o.poll_interval = p.observer.poll_interval;
    for (const auto& [name, op] : p.observer.operations) {
      metrics::OperationStats& m = o.operations[name];
      m.latency_us.Merge(op.latency_us);
      m.errors += op.errors;
      for (const auto& [status, n] : op.by_status) m.by_status[status] += n;
      for (const auto& [message, n] : op.error_messages) m.AddErrorMessage(message, n);
      MergeWindows(m.windows, op.windows, shift_s);
    }
    o.list_sweeps += p.observer.list_sweeps;
    o.runs_by_listing += p.observer.runs_by_listing;
    o.runs_by_polling += p.observer.runs_by_polling;
    if (o.polling_reason.empty()) o.polling_reason = p.observer.polling_reason;
    o.observe_lag_ms.Merge(p.observer.observe_lag_ms);
    o.budget_wait += p.observer.budget_wait;
    results::HarnessUsage& u = out.harness_usage;
    u.wall_s += p.harness_usage.wall_s;
    u.cpu_user_s += p.harness_usage.cpu_user_s;
    u.cpu_system_s += p.harness_usage.cpu_system_s;
    u.peak_rss_bytes = std::max(u.peak_rss_bytes, p.harness_usage.peak_rss_bytes);
    u.rss_bytes = std::max(u.rss_bytes, p.harness_usage.rss_bytes);
    u.threads = std::max(u.threads, p.harness_usage.threads);
    out.back_pressure.waits += p.back_pressure.waits;
    out.back_pressure.waited += p.back_pressure.waited;
    out.back_pressure.not_resent += p.back_pressure.not_resent;
    for (const auto& [op, n] : p.back_pressure.by_operation)
      out.back_pressure.by_operation[op] += n;
    out.stress_steps.insert(out.stress_steps.end(), p.stress_steps.begin(), p.stress_steps.end());
    out.stress_stops.insert(out.stress_stops.end(), p.stress_stops.begin(), p.stress_stops.end());
    // Growth is never sharded (ApplyShard refuses it); the same scenario in
    // two parts (repetitions) adds its histograms level by level.
    for (const auto& curve : p.growth) {
      auto same = std::find_if(out.growth.begin(), out.growth.end(),
                               [&](const auto& o) { return o.scenario == curve.scenario; });
      if (same == out.growth.end()) {
        out.growth.push_back(curve);
        continue;
      }
      for (const auto& level : curve.levels) {
        auto at = std::find_if(same->levels.begin(), same->levels.end(),
                               [&](const auto& l) { return l.target_runs == level.target_runs; });
        if (at == same->levels.end()) {
          same->levels.push_back(level);
          continue;
        }
        for (const auto& [op, h] : level.latency_us) at->latency_us[op].Merge(h);
        for (const auto& [op, n] : level.errors) at->errors[op] += n;
      }
    }
    // Shards of one schedule scenario add up: fires owed and made.
    for (const auto& s : p.schedules) {
      auto same = std::find_if(out.schedules.begin(), out.schedules.end(),
                               [&](const auto& o) { return o.scenario == s.scenario; });
      if (same == out.schedules.end()) {
        out.schedules.push_back(s);
      } else {
        same->recurring_runs += s.recurring_runs;
        same->expected_fires += s.expected_fires;
        same->observed_fires += s.observed_fires;
      }
    }
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
