// What `run` adds around one pass over a scenario file: --repeat N
// repetitions, live Prometheus metrics (--metrics-listen) and --notify. The
// logic lives in report/ (repetitions, live_metrics, notify); this wires it
// to the run command's flags.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/results.h"
#include "harness/runner.h"
#include "metrics/recorder.h"
#include "report/live_metrics.h"
#include "report/thresholds.h"
#include "util/result.h"

namespace kfpbench::cli {

struct RunRepetitionFlags {
  int repeat = 1;
  std::string metrics_listen;
  std::string notify;

  void Add(CLI::App& cmd);
};

// One pass over the scenario file; `on_progress` must be called with the
// harness' progress.
using OnePass =
    std::function<harness::BenchmarkResults(const std::function<void(const harness::Progress&)>&)>;

class RepeatedRun {
 public:
  RepeatedRun(const RunRepetitionFlags& flags, metrics::Recorder& recorder,
              const std::atomic<bool>* interrupted);
  ~RepeatedRun();

  // Checks the flags and starts the metrics endpoint: before any load.
  Status Start();
  // Runs `pass` --repeat times, one repetition after the other (each runs all
  // scenarios of the file, so scenarios A and B go A1 B1 A2 B2 …, never
  // A A A then B B B). With more than one, each repetition is written to
  // OUT/rep-K/ and the result is their exact merge carrying per-repetition
  // summaries. Stops repeating on Ctrl-C.
  harness::BenchmarkResults Run(const std::filesystem::path& out_dir, const OnePass& pass);
  // Posts to --notify when a threshold failed; a delivery failure is printed
  // on stderr and changes nothing else.
  void NotifyThresholds(const harness::BenchmarkResults& results,
                        const std::vector<report::Verdict>& verdicts,
                        const std::string& results_path);

 private:
  const RunRepetitionFlags& flags_;
  metrics::Recorder& recorder_;
  const std::atomic<bool>* interrupted_;
  std::unique_ptr<report::LiveMetrics> live_;
};

}  // namespace kfpbench::cli
