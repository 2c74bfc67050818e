// Synthetic results for the report tests: realistic shapes (several
// operations, a time series, runs with DAG and step tasks, a failed run)
// without running anything.
#pragma once

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "metrics/recorder.h"
#include "results/results.h"
#include "util/ids.h"

namespace kfpbench::results::testing {

// GetRun: 100 calls of 1..100 ms, 2 of them 503; 10 s elapsed; one run of
// 3 s with one step, and one CreateRun refused.
inline BenchmarkResults Sample() {
  BenchmarkResults r;
  r.kfpbench_version = "test";
  r.started = WallTime(std::chrono::seconds(1700000000));
  r.finished = r.started + std::chrono::seconds(10);
  r.target.url = "http://127.0.0.1:1";
  r.target.embedded = true;
  metrics::Recorder rec(r.started);
  for (int i = 1; i <= 100; ++i) {
    rec.RecordCall("GetRun", std::chrono::milliseconds(i), i <= 98 ? 200 : 503,
                   r.started + std::chrono::milliseconds(i * 50));
  }
  r.operations = rec.Snapshot();
  RunRecord run;
  run.run_id = "r1";
  run.state = RuntimeState::kSucceeded;
  run.created = r.started;
  run.finished = r.started + std::chrono::seconds(3);
  run.tasks.push_back({"step", RuntimeState::kSucceeded, r.started,
                       r.started + std::chrono::milliseconds(250), run.finished});
  r.runs.push_back(run);
  RunRecord failed;
  failed.error = "CreateRun: HTTP 500";
  r.runs.push_back(failed);
  return r;
}

// `seconds` of load, `runs` runs; `latency_scale` multiplies every latency.
inline results::BenchmarkResults SyntheticResults(uint32_t seed, int seconds = 20, int runs = 12,
                                                  double latency_scale = 1.0) {
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  std::mt19937 rng(seed);
  std::lognormal_distribution<double> latency_ms(1.5, 0.5);
  results::BenchmarkResults r;
  r.kfpbench_version = "0.1.0-test";
  r.started = WallTime(std::chrono::seconds(1700000000));
  r.finished = r.started + std::chrono::seconds(seconds);
  r.target.url = "http://127.0.0.1:8888";
  r.target.embedded = true;
  r.target.healthz = {{"commit_sha", "abc"}, {"tag_name", "2.2.0"}};
  r.scenario_path = "examples/smoke.json";
  r.scenario_source = {
      {"thresholds",
       {{"GetRun", {"p95 < 50ms", "error_rate < 5%"}}, {"run_duration", {"p99 < 10m"}}}},
      {"scenarios", {{{"mode", "PIPELINE_RUN"}, {"numTimes", runs}}}}};
  metrics::Recorder rec(r.started);
  for (int ms = 0; ms < seconds * 1000; ms += 25) {
    WallTime at = r.started + milliseconds(ms);
    double scale = latency_scale * (ms > seconds * 500 ? 1.3 : 1.0);  // a slower second half
    auto lat = [&](double f) {
      return std::chrono::duration_cast<Duration>(
          microseconds(static_cast<int64_t>(latency_ms(rng) * 1000 * f * scale)));
    };
    rec.RecordCall("GetRun", lat(1), ms % 1000 == 500 ? 503 : 200, at);
    if (ms % 500 == 0) rec.RecordCall("CreateRun", lat(4), 200, at);
    if (ms % 2000 == 0) rec.RecordCall("ListRuns", lat(2), ms % 8000 == 0 ? 0 : 200, at);
  }
  r.operations = rec.Snapshot();
  for (int i = 0; i < runs; ++i) {
    results::RunRecord run;
    run.scenario = 0;
    run.run_id = "run-" + std::to_string(i);
    run.submitted = r.started + milliseconds(i * seconds * 800 / runs);
    if (i % 5 == 1) {
      run.recurring_run_id = "schedule-1";
      run.scheduled = run.submitted - milliseconds(40);
    }
    if (i % 2 == 0) run.intended = run.submitted - milliseconds(3 * i);  // open loop, some late
    run.created = run.submitted + milliseconds(5 + i);
    WallTime t = run.created;
    run.tasks.push_back({"root", RuntimeState::kSucceeded, t, t, {}, true});
    for (int s = 0; s < 3; ++s) {
      results::TaskTiming task{"step-" + std::to_string(s), RuntimeState::kSucceeded, t, {}, {}};
      task.started = t + milliseconds(100 + 37 * ((i + s) % 5));
      task.finished =
          task.started +
          milliseconds(static_cast<int64_t>((300 + 40 * s + 13 * (i % 7)) * latency_scale));
      t = task.finished;
      run.tasks.push_back(task);
    }
    run.tasks[0].finished = t;
    bool failed = i == runs - 1;
    run.state = failed ? RuntimeState::kFailed : RuntimeState::kSucceeded;
    if (failed) run.tasks.back().state = RuntimeState::kFailed;
    run.finished = t + milliseconds(20);
    run.observed = run.finished + milliseconds(150);
    r.runs.push_back(std::move(run));
  }
  results::RunRecord rejected;
  rejected.scenario = 0;
  rejected.error = "CreateRun: HTTP 500 <internal> & \"quoted\"";
  rejected.submitted = r.started + milliseconds(1234);
  r.runs.push_back(rejected);
  r.errors.push_back("scenario 0: one run was rejected");
  return r;
}

// A fresh folder under the system temporary folder, removed at scope exit.
class TempDir {
 public:
  TempDir() : path_(std::filesystem::temp_directory_path() / ("kfpbench-report-" + NewUuid())) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A growth curve whose operation latencies grow as runs^exponent: ListRuns
// at 100 us per run^exponent, GetRun flat at 500 us; 20 calls per level.
inline GrowthCurve SyntheticGrowth(double exponent, size_t scenario = 0) {
  GrowthCurve curve;
  curve.scenario = scenario;
  curve.extrapolate_to = 1000000;
  uint64_t noise = 1;
  for (int64_t runs : {1000, 5000, 20000, 100000}) {
    GrowthLevel level;
    level.target_runs = runs;
    level.runs_stored = runs;
    for (int i = 0; i < 20; ++i) {
      noise = noise * 6364136223846793005ULL + 1442695040888963407ULL;
      double jitter = 1 + static_cast<double>(noise >> 40) / (1ULL << 24) * 0.05;
      level.latency_us["ListRuns"].Record(
          static_cast<int64_t>(100 * std::pow(static_cast<double>(runs), exponent) * jitter));
      level.latency_us["GetRun"].Record(static_cast<int64_t>(500 * jitter));
    }
    curve.levels.push_back(level);
  }
  return curve;
}

}  // namespace kfpbench::results::testing
