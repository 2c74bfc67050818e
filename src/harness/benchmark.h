// One benchmark from start to verdict, on an open Session: the scenario file
// run --repeat times (live metrics and --notify beside it), the collectors
// and Prometheus read around each pass, then one finish step that prints the
// console report, writes results.json and the reports, judges thresholds and
// failures, and says how it ended. The CLI maps that to an exit code. Each
// pass of the scenario file is harness.h's RunScenarios.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/prometheus.h"
#include "harness/runner.h"
#include "harness/scenario.h"
#include "harness/session.h"
#include "http/url.h"
#include "kube/pod_reader.h"
#include "results/results.h"

namespace kfpbench::harness {

// How a benchmark ended (cli::ExitCode maps it to 0, 1, 99 or 130).
enum class Outcome {
  kOk,
  kFailed,            // a scenario errored, every call of an operation failed, runs failed
  kThresholdsFailed,  // the load ran as asked but a threshold was missed
  kInterrupted,       // Ctrl-C: partial results were written
};

struct FinishOptions {
  std::filesystem::path out_dir;
  nlohmann::json thresholds = nlohmann::json::object();  // {"CreateRun": ["p95 < 500ms"]}
  double max_failed_runs = 0;   // share of runs that may end other than SUCCEEDED
  std::string notify;           // POST failed thresholds here (Slack-compatible)
  std::filesystem::path junit;  // run --junit: JUnit XML here too; empty: none
  const std::atomic<bool>* interrupted = nullptr;
};

struct BenchmarkOptions {
  HarnessOptions harness;
  FinishOptions finish;
  int repeat = 1;              // repetitions, one after the other
  std::string metrics_listen;  // HOST:PORT for live Prometheus metrics
  std::vector<std::string> collectors;
  std::optional<http::Url> prometheus;  // read each step's CPU and memory after the load
  PrometheusOptions prometheus_options;
  kube::PodReaderOptions pods;  // context set: read the runs' pods before clean-up
  // The live status, about once a second (a terminal line, a log line).
  std::function<void(const results::Progress&)> on_progress;
  std::function<void()> on_pass_end;  // after each pass's load, e.g. to end the status line
};

// Runs `file` on `session` and finishes. An Error only for what stops the
// benchmark before any load (bad --metrics-listen or --notify, a target that
// cannot be used): bad input. Everything after is in the results and the
// Outcome.
Result<Outcome> RunBenchmark(Session& session, const ScenarioFile& file,
                             const BenchmarkOptions& options, std::ostream& console);

// The one precedence when several things went wrong: an interruption first
// (the results are partial, so nothing else is judged on them), then work
// that failed (a scenario error, an operation none of whose calls succeeded,
// runs that did not succeed), then thresholds. Work that failed outranks
// thresholds because it explains them: a --host answering 404 to every call
// also misses every threshold that needs data, and CI must see exit 1, not 99.
Outcome OutcomeOf(bool interrupted, bool work_failed, bool thresholds_failed);

// The finish step: console report, results.json, the other reports,
// thresholds (printed, and posted to `notify` when one failed) and the
// failure reasons, then the Outcome. A results.json that cannot be written
// is said on stderr and the benchmark fails: nothing is lost silently.
Outcome Finish(const results::BenchmarkResults& results, const FinishOptions& options,
               std::ostream& console);

}  // namespace kfpbench::harness
