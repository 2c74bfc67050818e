#include <fstream>

#include <fmt/format.h>

#include "report/reporter.h"
#include "util/strings.h"

namespace kfpbench::report {
namespace {

std::string Row(std::initializer_list<std::string> fields) {
  std::string out;
  for (const auto& f : fields) {
    if (!out.empty()) out += ',';
    out += CsvField(f);
  }
  return out + "\r\n";
}

std::string Time(WallTime t) { return t.time_since_epoch().count() ? FormatRfc3339(t) : ""; }

std::string Ms(std::optional<Duration> d) {
  if (!d) return "";
  return fmt::format("{:.3f}", std::chrono::duration<double, std::milli>(*d).count());
}

std::string Between(WallTime from, WallTime to) {
  if (!from.time_since_epoch().count() || !to.time_since_epoch().count()) return "";
  return Ms(to - from);
}

std::string Operations(const results::BenchmarkResults& r) {
  double elapsed = ToSeconds(r.finished - r.started);
  std::string out = Row({"operation", "count", "errors", "error_rate", "throughput_per_s", "min_us",
                         "mean_us", "p50_us", "p90_us", "p95_us", "p99_us", "p999_us", "max_us"});
  for (const auto& [name, op] : r.operations) {
    const auto& h = op.latency_us;
    auto p = [&](double q) { return std::to_string(h.ValueAtPercentile(q)); };
    out += Row({name, std::to_string(h.count()), std::to_string(op.errors),
                fmt::format("{:.6f}", h.count() ? double(op.errors) / h.count() : 0.0),
                fmt::format("{:.3f}", elapsed > 0 ? h.count() / elapsed : 0.0),
                std::to_string(h.min()), fmt::format("{:.1f}", h.mean()), p(50), p(90), p(95),
                p(99), p(99.9), std::to_string(h.max())});
  }
  return out;
}

std::string Runs(const results::BenchmarkResults& r) {
  std::string out = Row({"scenario", "run_id", "state", "intended_at", "submitted_at", "created_at",
                         "finished_at", "observed_at", "duration_ms", "queue_wait_ms",
                         "start_delay_ms", "latency_from_intended_ms", "recurring_run_id",
                         "scheduled_at", "trigger_lag_ms", "error"});
  for (const auto& run : r.runs) {
    out += Row({std::to_string(run.scenario), run.run_id, std::string(RuntimeStateName(run.state)),
                Time(run.intended), Time(run.submitted), Time(run.created), Time(run.finished),
                Time(run.observed), run.Finished() ? Ms(run.RunDuration()) : "",
                Ms(run.QueueWait()), Ms(run.StartDelay()), Ms(run.LatencyFromIntended()),
                run.recurring_run_id, Time(run.scheduled), Ms(run.TriggerLag()), run.error});
  }
  return out;
}

// One row per step of each stress scenario; the last step of a scenario
// carries why the search stopped there.
std::string Stress(const results::BenchmarkResults& r) {
  std::string out =
      Row({"scenario", "rate_per_minute", "runs", "failed", "p95_latency_from_intended_ms",
           "error_rate", "held", "stopped", "stopped_because"});
  for (size_t i = 0; i < r.stress_steps.size(); ++i) {
    const auto& s = r.stress_steps[i];
    bool last = i + 1 == r.stress_steps.size() || r.stress_steps[i + 1].scenario != s.scenario;
    std::string stopped, because;
    for (const auto& stop : r.stress_stops) {
      if (last && stop.scenario == s.scenario) {
        stopped = results::StressStopReasonName(stop.reason);
        because = stop.detail;
      }
    }
    out += Row({std::to_string(s.scenario), fmt::format("{:g}", s.rate_per_minute),
                std::to_string(s.runs), std::to_string(s.failed), std::to_string(s.p95_ms),
                fmt::format("{:.6f}", s.error_rate), s.held ? "true" : "false", stopped, because});
  }
  return out;
}

// One row per level and operation of each growth scenario: the points the
// fits go through, for plotting elsewhere.
std::string Growth(const results::BenchmarkResults& r) {
  std::string out = Row({"scenario", "target_runs", "runs_stored", "operation", "count", "errors",
                         "p50_us", "p99_us", "fill_objects_per_s"});
  for (const auto& curve : r.growth) {
    for (const auto& level : curve.levels) {
      for (const auto& [op, h] : level.latency_us) {
        auto errors = level.errors.find(op);
        out +=
            Row({std::to_string(curve.scenario), std::to_string(level.target_runs),
                 std::to_string(level.runs_stored), op, std::to_string(h.count()),
                 std::to_string(errors == level.errors.end() ? 0 : errors->second),
                 std::to_string(h.ValueAtPercentile(50)), std::to_string(h.ValueAtPercentile(99)),
                 fmt::format("{:.1f}", level.FillRatePerSecond())});
      }
    }
  }
  return out;
}

std::string Schedules(const results::BenchmarkResults& r) {
  std::string out = Row({"scenario", "recurring_runs", "expected_fires", "observed_fires",
                         "missed_fires", "trigger_lag_p50_ms", "trigger_lag_max_ms"});
  for (const auto& s : r.schedules) {
    metrics::Histogram lags;
    for (const auto& run : r.runs) {
      auto lag = run.scenario == s.scenario ? run.TriggerLag() : std::nullopt;
      if (lag) lags.Record(std::chrono::duration_cast<std::chrono::milliseconds>(*lag).count());
    }
    out += Row({std::to_string(s.scenario), std::to_string(s.recurring_runs),
                std::to_string(s.expected_fires), std::to_string(s.observed_fires),
                std::to_string(s.Missed()),
                lags.count() ? std::to_string(lags.ValueAtPercentile(50)) : "",
                lags.count() ? std::to_string(lags.max()) : ""});
  }
  return out;
}

std::string Tasks(const results::BenchmarkResults& r) {
  std::string out = Row({"run_id", "task", "state", "dag", "created_at", "started_at",
                         "finished_at", "wait_ms", "running_ms"});
  for (const auto& run : r.runs) {
    for (const auto& t : run.tasks) {
      out += Row({run.run_id, t.name, std::string(RuntimeStateName(t.state)),
                  t.dag ? "true" : "false", Time(t.created), Time(t.started), Time(t.finished),
                  Between(t.created, t.started), Between(t.started, t.finished)});
    }
  }
  return out;
}

}  // namespace

Status CsvReporter::Report(const results::BenchmarkResults& results) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", dir_.string(), ec.message())};
  for (const auto& [name, text] :
       {std::pair{"operations.csv", Operations(results)}, std::pair{"runs.csv", Runs(results)},
        std::pair{"tasks.csv", Tasks(results)}, std::pair{"stress.csv", Stress(results)},
        std::pair{"schedules.csv", Schedules(results)}, std::pair{"growth.csv", Growth(results)}}) {
    if (Status s = WriteFileAtomically(dir_ / name, text); !s.ok()) return s;
  }
  return Ok();
}

}  // namespace kfpbench::report
