#include <fstream>

#include <fmt/format.h>

#include "report/reporter.h"

namespace kfpbench::report {
namespace {

// RFC 4180: quote a field holding a comma, quote or line break; double quotes.
std::string Field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Row(std::initializer_list<std::string> fields) {
  std::string out;
  for (const auto& f : fields) {
    if (!out.empty()) out += ',';
    out += Field(f);
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

std::string Operations(const harness::BenchmarkResults& r) {
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

std::string Runs(const harness::BenchmarkResults& r) {
  std::string out = Row({"scenario", "run_id", "state", "intended_at", "submitted_at", "created_at",
                         "finished_at", "observed_at", "duration_ms", "queue_wait_ms",
                         "start_delay_ms", "error"});
  for (const auto& run : r.runs) {
    out += Row({std::to_string(run.scenario), run.run_id, std::string(RuntimeStateName(run.state)),
                Time(run.intended), Time(run.submitted), Time(run.created), Time(run.finished),
                Time(run.observed), run.Finished() ? Ms(run.RunDuration()) : "",
                Ms(run.QueueWait()), Ms(run.StartDelay()), run.error});
  }
  return out;
}

std::string Tasks(const harness::BenchmarkResults& r) {
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

Status CsvReporter::Report(const harness::BenchmarkResults& results) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", dir_.string(), ec.message())};
  for (const auto& [name, text] :
       {std::pair{"operations.csv", Operations(results)}, std::pair{"runs.csv", Runs(results)},
        std::pair{"tasks.csv", Tasks(results)}}) {
    if (Status s = WriteFileAtomically(dir_ / name, text); !s.ok()) return s;
  }
  return Ok();
}

}  // namespace kfpbench::report
