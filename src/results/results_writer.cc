#include "results/results_json.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/files.h"

namespace kfpbench::results {
namespace {

using nlohmann::json;

constexpr const char* kPercentileMethod =
    "nearest-rank over a log-linear histogram (128 buckets per power of two); a reported "
    "percentile is the upper edge of its bucket, at most 0.78% above the true sample, and never "
    "above the exact maximum";

std::string Time(WallTime t) {
  return t.time_since_epoch().count() ? FormatRfc3339(t) : std::string();
}

int64_t CachedTasks(const std::vector<RunRecord>& runs) {
  int64_t n = 0;
  for (const auto& r : runs) {
    for (const auto& t : r.tasks) n += t.cached;
  }
  return n;
}

json TargetObjectsJson(const TargetObjects& o) {
  return {{"pipelines", o.pipelines},
          {"experiments", o.experiments},
          {"runs", o.runs},
          {"recurring_runs", o.recurring_runs}};
}

json OperationJson(const metrics::OperationStats& op, double elapsed_s) {
  json by_status = json::object();
  for (const auto& [status, n] : op.by_status) by_status[std::to_string(status)] = n;
  json series = json::array();
  for (const auto& w : op.windows) {
    series.push_back({{"t", w.second},
                      {"count", w.count},
                      {"errors", w.errors},
                      {"p50_us", w.p50_us},
                      {"p95_us", w.p95_us},
                      {"p99_us", w.p99_us},
                      {"max_us", w.max_us}});
  }
  uint64_t count = op.latency_us.count();
  return {{"count", count},
          {"errors", op.errors},
          {"error_rate", count ? static_cast<double>(op.errors) / count : 0.0},
          {"throughput_per_s", elapsed_s > 0 ? count / elapsed_s : 0.0},
          {"by_status", std::move(by_status)},
          {"error_messages", op.error_messages},
          {"latency_us", SummaryJson(op.latency_us)},
          {"histogram", op.latency_us.ToJson()},
          {"timeseries", std::move(series)}};
}

json RunJson(const RunRecord& r) {
  json tasks = json::array();
  for (const auto& t : r.tasks) {
    json task = {{"name", t.name},
                 {"state", RuntimeStateName(t.state)},
                 {"created_at", Time(t.created)},
                 {"started_at", Time(t.started)},
                 {"finished_at", Time(t.finished)},
                 {"dag", t.dag}};
    // Resource use per step (harness/prometheus.h), only when measured.
    if (t.cached) task["cached"] = true;
    if (!t.pod_name.empty()) task["pod_name"] = t.pod_name;
    if (t.cpu_seconds) task["cpu_seconds"] = *t.cpu_seconds;
    if (t.peak_memory_bytes) task["peak_memory_bytes"] = *t.peak_memory_bytes;
    if (!t.resource_source.empty()) task["resource_source"] = t.resource_source;
    auto usage = [](const TaskTiming::Usage& u) { return json{{"peak", u.peak}, {"p95", u.p95}}; };
    if (t.cpu_cores || t.memory_bytes) {
      json resources = {{"samples", t.resource_samples}};
      if (t.cpu_cores) resources["cpu_cores"] = usage(*t.cpu_cores);
      if (t.memory_bytes) resources["memory_bytes"] = usage(*t.memory_bytes);
      task["resources"] = std::move(resources);
    }
    if (!t.cpu_cores_samples.empty()) task["cpu_cores_samples"] = t.cpu_cores_samples;
    if (!t.memory_bytes_samples.empty()) task["memory_bytes_samples"] = t.memory_bytes_samples;
    tasks.push_back(std::move(task));
  }
  json j = {{"scenario", r.scenario},
            {"run_id", r.run_id},
            {"state", RuntimeStateName(r.state)},
            {"intended_at", Time(r.intended)},
            {"recurring_run_id", r.recurring_run_id},
            {"scheduled_at", Time(r.scheduled)},
            {"submitted_at", Time(r.submitted)},
            {"created_at", Time(r.created)},
            {"finished_at", Time(r.finished)},
            {"observed_at", Time(r.observed)},
            {"tasks", std::move(tasks)}};
  if (!r.error.empty()) j["error"] = r.error;
  if (r.Finished()) {
    j["duration_ms"] = std::chrono::duration<double, std::milli>(r.RunDuration()).count();
  }
  if (auto d = r.StartDelay()) {
    j["start_delay_ms"] = std::chrono::duration<double, std::milli>(*d).count();
  }
  if (auto l = r.LatencyFromIntended()) {
    j["latency_from_intended_ms"] = std::chrono::duration<double, std::milli>(*l).count();
  }
  if (auto l = r.TriggerLag(); l && !r.recurring_run_id.empty()) {
    j["trigger_lag_ms"] = std::chrono::duration<double, std::milli>(*l).count();
  }
  if (auto w = r.QueueWait()) {
    j["queue_wait_ms"] = std::chrono::duration<double, std::milli>(*w).count();
  }
  return j;
}

json ScenariosJson(const BenchmarkResults& results) {
  json out = json::array();
  for (const auto& s : results.scenarios) {
    out.push_back({{"index", s.index}, {"mode", s.mode}, {"artifact_bytes", s.artifact_bytes}});
  }
  return out;
}

// Per stress scenario: every step tried and the highest rate that held.
json StressJson(const BenchmarkResults& results) {
  json out = json::object();
  for (const auto& s : results.stress_steps) {
    json& entry = out[std::to_string(s.scenario)];
    if (entry.is_null()) {
      entry = {{"steps", json::array()},
               {"peak_rate_per_minute", results.StressPeakPerMinute(s.scenario)}};
    }
    entry["steps"].push_back({{"rate_per_minute", s.rate_per_minute},
                              {"runs", s.runs},
                              {"failed", s.failed},
                              {"p95_latency_from_intended_ms", s.p95_ms},
                              {"error_rate", s.error_rate},
                              {"held", s.held}});
  }
  for (const auto& s : results.stress_stops) {
    json& entry = out[std::to_string(s.scenario)];
    if (entry.is_null()) entry = {{"steps", json::array()}, {"peak_rate_per_minute", 0.0}};
    entry["stopped"] = StressStopReasonName(s.reason);
    entry["stopped_because"] = s.detail;
  }
  return out;
}

json FitJson(const std::optional<PowerLawFit>& fit) {
  if (!fit) return nullptr;
  auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {{"points", fit->points},
          {"exponent", fit->exponent},
          {"exponent_low", optional(fit->exponent_low)},
          {"exponent_high", optional(fit->exponent_high)},
          {"confidence", 0.95},
          {"intercept_ln_us", fit->intercept},
          {"r_squared", fit->r_squared},
          {"verdict", fit->verdict}};
}

// Per growth scenario: each level's fill and histograms, and the fits over
// the levels (derived: the reader recomputes them).
json GrowthJson(const BenchmarkResults& results) {
  json out = json::object();
  for (const auto& curve : results.growth) {
    json levels = json::array();
    for (const auto& l : curve.levels) {
      json ops = json::object();
      for (const auto& [name, h] : l.latency_us) {
        auto errors = l.errors.find(name);
        ops[name] = {{"latency_us", SummaryJson(h)},
                     {"histogram", h.ToJson()},
                     {"errors", errors == l.errors.end() ? 0 : errors->second}};
      }
      levels.push_back({{"target_runs", l.target_runs},
                        {"runs_stored", l.runs_stored},
                        {"experiments_stored", l.experiments_stored},
                        {"pipelines_stored", l.pipelines_stored},
                        {"fill",
                         {{"runs_created", l.runs_created},
                          {"experiments_created", l.experiments_created},
                          {"pipelines_created", l.pipelines_created},
                          {"versions_created", l.versions_created},
                          {"failures", l.fill_failures},
                          {"seconds", l.fill_seconds},
                          {"objects_per_s", l.FillRatePerSecond()},
                          {"settle_seconds", l.settle_seconds},
                          {"unsettled_runs", l.unsettled_runs}}},
                        {"measure_seconds", l.measure_seconds},
                        {"deepest_page", l.deepest_page},
                        {"operations", std::move(ops)}});
    }
    json fits = json::object();
    for (const auto& [name, f] : curve.Fits()) {
      auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
      fits[name] = {{"p50", FitJson(f.p50)},
                    {"p99", FitJson(f.p99)},
                    {"p99_at_extrapolation_us", optional(f.p99_at_extrapolation)},
                    {"p99_at_extrapolation_low_us", optional(f.p99_at_extrapolation_low)},
                    {"p99_at_extrapolation_high_us", optional(f.p99_at_extrapolation_high)}};
    }
    out[std::to_string(curve.scenario)] = {{"objects", "runs stored (ListRuns total_size)"},
                                           {"extrapolate_to", curve.extrapolate_to},
                                           {"stopped_because", curve.stopped_because},
                                           {"levels", std::move(levels)},
                                           {"fits", std::move(fits)}};
  }
  return out;
}

// Per SCHEDULED_RUNS scenario: fires owed and made, and trigger lag.
json SchedulesJson(const BenchmarkResults& results) {
  json out = json::object();
  auto lags = results.TriggerLagsMs();
  for (const auto& s : results.schedules) {
    out[std::to_string(s.scenario)] = {{"recurring_runs", s.recurring_runs},
                                       {"expected_fires", s.expected_fires},
                                       {"observed_fires", s.observed_fires},
                                       {"missed_fires", s.Missed()}};
  }
  if (lags.count() > 0) {
    out["trigger_lag_ms"] = SummaryJson(lags);
    out["trigger_lag_histogram"] = lags.ToJson();
  }
  return out;
}

json StepsJson(const BenchmarkResults& results) {
  json out = json::object();
  for (const auto& [name, s] : results.Steps()) {
    out[name] = {{"duration_ms", SummaryJson(s.duration_ms)},
                 {"duration_histogram", s.duration_ms.ToJson()},
                 {"scheduling_delay_ms", SummaryJson(s.scheduling_delay_ms)},
                 {"scheduling_delay_histogram", s.scheduling_delay_ms.ToJson()}};
  }
  return out;
}

// LARGE_DATASET: per step, artifact bytes over the step's duration.
json ArtifactsJson(const BenchmarkResults& results) {
  json out = json::object();
  for (const auto& [step, t] : results.ArtifactThroughput()) {
    const auto& h = t.kib_per_s;
    auto mib = [](int64_t kib) { return kib / 1024.0; };
    out[step] = {{"artifact_bytes", t.artifact_bytes},
                 {"steps", h.count()},
                 {"mib_per_s",
                  {{"min", mib(h.min())},
                   {"p50", mib(h.ValueAtPercentile(50))},
                   {"mean", h.mean() / 1024.0},
                   {"max", mib(h.max())}}}};
  }
  return out;
}

json ObserverJson(const BenchmarkResults& results, double elapsed_s) {
  const ObserverSummary& o = results.observer;
  if (!o.Used()) return nullptr;
  json ops = json::object();
  for (const auto& [name, op] : o.operations) ops[name] = OperationJson(op, elapsed_s);
  uint64_t workload = 0;
  for (const auto& [name, op] : results.operations) workload += op.latency_us.count();
  const uint64_t calls = o.Calls();
  const uint64_t runs = o.runs_by_listing + o.runs_by_polling;
  return {
      {"qps_budget", o.qps_budget},
      {"poll_interval_ms", ToMillis(o.poll_interval)},
      {"calls", calls},
      {"share_of_calls",
       calls + workload ? static_cast<double>(calls) / static_cast<double>(calls + workload) : 0.0},
      {"calls_per_run", runs ? static_cast<double>(calls) / static_cast<double>(runs) : 0.0},
      {"list_sweeps", o.list_sweeps},
      {"runs_by_listing", o.runs_by_listing},
      {"runs_by_polling", o.runs_by_polling},
      {"polling_reason", o.polling_reason},
      {"observe_lag_ms", SummaryJson(o.observe_lag_ms)},
      {"observe_lag_histogram", o.observe_lag_ms.ToJson()},
      {"budget_wait_ms", ToMillis(o.budget_wait)},
      {"operations", std::move(ops)}};
}

json HarnessUsageJson(const HarnessUsage& u) {
  if (!u.Measured()) return nullptr;
  return {{"wall_s", u.wall_s},
          {"cpu_user_s", u.cpu_user_s},
          {"cpu_system_s", u.cpu_system_s},
          {"cpu_cores", u.CpuCores()},
          {"peak_rss_bytes", u.peak_rss_bytes},
          {"rss_bytes", u.rss_bytes},
          {"threads", u.threads}};
}

json BackPressureJson(const BackPressure& b) {
  return {{"waits", b.waits},
          {"waited_ms", ToMillis(b.waited)},
          {"not_resent", b.not_resent},
          {"by_operation", b.by_operation}};
}

}  // namespace

json SummaryJson(const metrics::Histogram& h) {
  return {{"count", h.count()},
          {"min", h.min()},
          {"mean", h.mean()},
          {"p50", h.ValueAtPercentile(50)},
          {"p90", h.ValueAtPercentile(90)},
          {"p95", h.ValueAtPercentile(95)},
          {"p99", h.ValueAtPercentile(99)},
          {"p999", h.ValueAtPercentile(99.9)},
          {"max", h.max()}};
}

json ResultsToJson(const BenchmarkResults& results) {
  double elapsed_s = ToSeconds(results.finished - results.started);
  json ops = json::object();
  for (const auto& [name, op] : results.operations) ops[name] = OperationJson(op, elapsed_s);
  json records = json::array();
  for (const auto& r : results.runs) records.push_back(RunJson(r));
  auto durations = results.RunDurationsMs();
  auto waits = results.QueueWaitsMs();
  auto delays = results.StartDelaysMs();
  json by_state = json::object();
  for (const auto& [state, n] : results.RunsByState()) by_state[state] = n;
  return {
      {"schema", "kfpbench/results"},
      {"schema_version", BenchmarkResults::kSchemaVersion},
      {"kfpbench_version", results.kfpbench_version},
      {"started_at", Time(results.started)},
      {"finished_at", Time(results.finished)},
      {"elapsed_s", elapsed_s},
      {"partial", results.partial},
      {"shard", {{"index", results.shard_index}, {"count", results.shard_count}}},
      {"partial_reason", results.partial_reason},
      {"target",
       {{"url", results.target.url},
        {"embedded", results.target.embedded},
        {"api_version", results.target.api_version},
        {"healthz", results.target.healthz},
        {"origin", results.target.origin},
        {"namespace", results.target.namespace_},
        {"executor", results.target.executor},
        {"executor_reason", results.target.executor_reason}}},
      {"scenario",
       {{"path", results.scenario_path},
        {"source", results.scenario_source},
        {"time_scale", results.time_scale}}},
      {"scenarios", ScenariosJson(results)},
      {"units", {{"latency", "us"}, {"run_duration", "ms"}, {"timeseries_window", "1s"}}},
      {"percentile_method", kPercentileMethod},
      {"operations", std::move(ops)},
      {"runs",
       {{"count", results.runs.size()},
        {"by_state", std::move(by_state)},
        // Runs KFP's cache answered whole ran nothing: their durations are
        // in duration_ms all the same, so a reader can tell.
        {"fully_cached", std::count_if(results.runs.begin(), results.runs.end(), FullyCached)},
        {"cached_tasks", CachedTasks(results.runs)},
        {"duration_ms", SummaryJson(durations)},
        {"duration_histogram", durations.ToJson()},
        {"queue_wait_ms", SummaryJson(waits)},
        {"queue_wait_histogram", waits.ToJson()},
        {"start_delay_ms", SummaryJson(delays)},
        {"late_starts", results.LateStarts()},
        {"late_start_threshold_ms", BenchmarkResults::kLateStart.count()},
        {"records", std::move(records)}}},
      {"steps", StepsJson(results)},
      {"stress", StressJson(results)},
      {"schedules", SchedulesJson(results)},
      {"growth", GrowthJson(results)},
      {"artifacts", ArtifactsJson(results)},
      {"errors", results.errors},
      {"cleanup_failures", results.cleanup_failures},
      {"benchmark_id", results.benchmark_id},
      {"created", TargetObjectsJson(results.created)},
      {"deleted", TargetObjectsJson(results.deleted)},
      {"kept", results.kept},
      {"resent_requests", results.resent_requests},
      {"observer", ObserverJson(results, elapsed_s)},
      {"harness_usage", HarnessUsageJson(results.harness_usage)},
      {"back_pressure", BackPressureJson(results.back_pressure)},
      {"collectors", results.collectors},
      {"pod_lifecycle",
       results.pod_lifecycle.collected ? PodLifecycleToJson(results.pod_lifecycle) : json(nullptr)},
      {"repetitions", RepetitionsToJson(results.repetitions)},
  };
}

nlohmann::json RepetitionsToJson(const std::vector<RepetitionSummary>& repetitions) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : repetitions) {
    nlohmann::json ops = nlohmann::json::object();
    for (const auto& [name, h] : r.latency_us) ops[name] = h.ToJson();
    out.push_back({{"started_at", Time(r.started)},
                   {"finished_at", Time(r.finished)},
                   {"latency_us", std::move(ops)},
                   {"run_duration_ms", r.run_duration_ms.ToJson()}});
  }
  return out;
}

Status WriteResults(const std::filesystem::path& path, const BenchmarkResults& results) {
  return WriteFileAtomically(path, ResultsToJson(results).dump(2) + "\n");
}

}  // namespace kfpbench::results
