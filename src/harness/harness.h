// One pass of a scenario file: every scenario on its own thread from its
// startTime, as KFP's perf-tests do, all recorded into one BenchmarkResults.
// It knows nothing of repetitions, collectors, reports or exit codes: those
// are benchmark.h's, which runs this once per --repeat and finishes.
#pragma once

#include "harness/runner.h"
#include "harness/scenario.h"
#include "kfp/client.h"
#include "metrics/recorder.h"
#include "results/results.h"

namespace kfpbench::harness {

// Feeds every KFP API call into a metrics::Recorder (a kfp::CallObserver;
// engine::RunObserver, of pipeline runs, is another thing).
class CallRecorder : public kfp::CallObserver {
 public:
  explicit CallRecorder(metrics::Recorder& recorder) : recorder_(recorder) {}
  void OnCall(std::string_view operation, Duration latency, int http_status,
              WallTime completed_at) override {
    recorder_.RecordCall(operation, latency, http_status, completed_at);
  }
  void OnError(std::string_view operation, const std::string& message, int http_status) override {
    recorder_.RecordError(operation, message, http_status);
  }

 private:
  metrics::Recorder& recorder_;
};

// `client` must report its calls to `recorder`. The results are complete even
// when scenarios fail (their errors are listed) or the run is interrupted
// (marked partial).
// `on_progress`, when set, is called about once a second from a helper thread.
results::BenchmarkResults RunScenarios(
    const ScenarioFile& file, kfp::Client& client, metrics::Recorder& recorder,
    const HarnessOptions& options,
    const std::function<void(const results::Progress&)>& on_progress = {});

}  // namespace kfpbench::harness
