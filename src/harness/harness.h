// Runs a scenario file: every scenario on its own thread from its startTime,
// as KFP's perf-tests do, all recorded into one BenchmarkResults.
#pragma once

#include "harness/results.h"
#include "harness/runner.h"
#include "harness/scenario.h"
#include "kfp/client.h"
#include "metrics/recorder.h"

namespace kfpbench::harness {

// Feeds every KFP API call into a metrics::Recorder.
class RecordingObserver : public kfp::CallObserver {
 public:
  explicit RecordingObserver(metrics::Recorder& recorder) : recorder_(recorder) {}
  void OnCall(std::string_view operation, Duration latency, int http_status,
              WallTime completed_at) override {
    recorder_.RecordCall(operation, latency, http_status, completed_at);
  }
  void OnError(std::string_view operation, const std::string& message) override {
    recorder_.RecordError(operation, message);
  }

 private:
  metrics::Recorder& recorder_;
};

// Marks `results` partial, saying why, when the load was aborted or
// interrupted or runs had not finished; both RunScenarios and orchestrate end
// with it.
void MarkPartial(const Context& context, BenchmarkResults& results);

// `client` must report its calls to `recorder`. The results are complete even
// when scenarios fail (their errors are listed) or the run is interrupted
// (marked partial).
// `on_progress`, when set, is called about once a second from a helper thread.
BenchmarkResults RunScenarios(const ScenarioFile& file, kfp::Client& client,
                              metrics::Recorder& recorder, const HarnessOptions& options,
                              const std::function<void(const Progress&)>& on_progress = {});

}  // namespace kfpbench::harness
