#include "results/results_json.h"

#include <algorithm>

#include <fmt/format.h>

#include "results/results_fields.h"
#include "util/files.h"
#include "util/json_reader.h"

namespace kfpbench::results {
namespace {

using nlohmann::json;

constexpr const char* kPercentileMethod =
    "nearest-rank over a log-linear histogram (128 buckets per power of two); a reported "
    "percentile is the upper edge of its bucket, at most 0.78% above the true sample, and never "
    "above the exact maximum";

int64_t CachedTasks(const std::vector<RunRecord>& runs) {
  int64_t n = 0;
  for (const auto& r : runs) {
    for (const auto& t : r.tasks) n += t.cached;
  }
  return n;
}

json OperationJson(const metrics::OperationStats& op, double elapsed_s) {
  json by_status = json::object();
  for (const auto& [status, n] : op.by_status) by_status[std::to_string(status)] = n;
  json series = json::array();
  for (const auto& w : op.windows) series.push_back(kWindowFields.Json(w));
  uint64_t count = op.latency_us.count();
  json out = kOperationFields.Json(op);
  out["count"] = count;
  out["error_rate"] = count ? static_cast<double>(op.errors) / count : 0.0;
  out["throughput_per_s"] = elapsed_s > 0 ? count / elapsed_s : 0.0;
  out["by_status"] = std::move(by_status);
  out["error_messages"] = op.error_messages;
  out["latency_us"] = SummaryJson(op.latency_us);
  out["timeseries"] = std::move(series);
  return out;
}

json RunJson(const RunRecord& r) {
  json tasks = json::array();
  for (const auto& t : r.tasks) {
    json task = kTaskFields.Json(t);
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
  json j = kRunFields.Json(r);
  j["tasks"] = std::move(tasks);
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
    out.push_back(kScenarioInfoFields.Json(s));
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
    entry["steps"].push_back(kStressStepFields.Json(s));
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
      json level = kGrowthLevelFields.Json(l);  // with its "fill"
      level["fill"]["objects_per_s"] = l.FillRatePerSecond();
      level["operations"] = std::move(ops);
      levels.push_back(std::move(level));
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
    json entry = kGrowthCurveFields.Json(curve);
    entry["objects"] = "runs stored (ListRuns total_size)";
    entry["levels"] = std::move(levels);
    entry["fits"] = std::move(fits);
    out[std::to_string(curve.scenario)] = std::move(entry);
  }
  return out;
}

// Per SCHEDULED_RUNS scenario: fires owed and made, and trigger lag.
json SchedulesJson(const BenchmarkResults& results) {
  json out = json::object();
  auto lags = results.TriggerLagsMs();
  for (const auto& s : results.schedules) {
    json& entry = out[std::to_string(s.scenario)];
    entry = kScheduleFields.Json(s);
    entry["missed_fires"] = s.Missed();
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
  json out = kObserverFields.Json(o);
  out["calls"] = calls;
  out["share_of_calls"] =
      calls + workload ? static_cast<double>(calls) / static_cast<double>(calls + workload) : 0.0;
  out["calls_per_run"] = runs ? static_cast<double>(calls) / static_cast<double>(runs) : 0.0;
  out["observe_lag_ms"] = SummaryJson(o.observe_lag_ms);
  out["operations"] = std::move(ops);
  return out;
}

json HarnessUsageJson(const HarnessUsage& u) {
  if (!u.Measured()) return nullptr;
  json out = kHarnessUsageFields.Json(u);
  out["cpu_cores"] = u.CpuCores();
  return out;
}

json BackPressureJson(const BackPressure& b) {
  json out = kBackPressureFields.Json(b);
  out["by_operation"] = b.by_operation;
  return out;
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
  json out = {
      {"schema", "kfpbench/results"},
      {"schema_version", BenchmarkResults::kSchemaVersion},
      {"elapsed_s", elapsed_s},
      {"target", kTargetFields.Json(results.target)},
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
      {"created", kTargetObjectFields.Json(results.created)},
      {"deleted", kTargetObjectFields.Json(results.deleted)},
      {"observer", ObserverJson(results, elapsed_s)},
      {"harness_usage", HarnessUsageJson(results.harness_usage)},
      {"back_pressure", BackPressureJson(results.back_pressure)},
      {"collectors", results.collectors},
      {"pod_lifecycle",
       results.pod_lifecycle.collected ? PodLifecycleToJson(results.pod_lifecycle) : json(nullptr)},
      {"repetitions", RepetitionsToJson(results.repetitions)},
  };
  kResultsFields.Write(out, results);  // with its "scenario" and "shard"
  return out;
}

nlohmann::json RepetitionsToJson(const std::vector<RepetitionSummary>& repetitions) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : repetitions) {
    nlohmann::json ops = nlohmann::json::object();
    for (const auto& [name, h] : r.latency_us) ops[name] = h.ToJson();
    out.push_back({{"started_at", ValueJson(r.started)},
                   {"finished_at", ValueJson(r.finished)},
                   {"latency_us", std::move(ops)},
                   {"run_duration_ms", r.run_duration_ms.ToJson()}});
  }
  return out;
}

Status WriteResults(const std::filesystem::path& path, const BenchmarkResults& results) {
  // Error messages quote what targets answered: one byte that is not UTF-8
  // must not lose the results.
  return WriteFileAtomically(path, DumpJson(ResultsToJson(results), 2) + "\n");
}

}  // namespace kfpbench::results
