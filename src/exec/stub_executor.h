// An executor that runs nothing: each task just lasts a sampled duration on
// the loop's clock and then succeeds with type-correct placeholder outputs.
// It measures the control plane alone, and since it only uses loop.After it
// runs unchanged on the simulator's virtual clock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/event_loop.h"
#include "engine/executor.h"
#include "exec/artifact_store.h"
#include "exec/duration_dist.h"
#include "util/result.h"

namespace kfpbench::exec {

struct StubExecutorOptions {
  DurationDist default_duration = DurationDist::Constant(std::chrono::milliseconds(100));
  std::map<std::string, DurationDist> by_executor_label;  // "exec-train" -> ...
  // Probability that a step fails (as a step whose code exits 1), by
  // executor label, else the default: for pipelines whose steps are meant
  // to fail, and for measuring a platform under failing steps.
  double default_failure_probability = 0;
  std::map<std::string, double> failure_by_executor_label;
  // Bytes a step uploads to the artifact store when its time is up, by
  // executor label, else the default; the task ends when the upload does.
  int64_t default_artifact_bytes = 0;
  std::map<std::string, int64_t> artifact_bytes_by_label;
  uint64_t seed = 1;  // same seed and launch order, same durations
};

// Builds options from specs like "exec-train=lognormal:60s:0.3"; a spec
// without "label=" replaces the default.
Result<StubExecutorOptions> ParseStubExecutorOptions(const std::vector<std::string>& specs,
                                                     uint64_t seed = 1);

// Adds failure probabilities from specs like "exec-fail=1", "exec-train=5%"
// or "0.01" (the default for every step).
Status AddStubFailures(const std::vector<std::string>& specs, StubExecutorOptions& options);

// The value a stub reports for an output of IR parameter type `type`
// ("STRING" -> "stub", "NUMBER_INTEGER" -> "1", ...; unknown types -> "stub").
// Adds artifact sizes from specs like "exec-train=2Gi" or "10Mi" (the
// default for every step).
Status AddStubArtifactBytes(const std::vector<std::string>& specs, StubExecutorOptions& options);

std::string StubValueForType(const std::string& type);

class StubExecutor : public engine::Executor {
 public:
  // `store` receives the steps' uploads (it must outlive the executor and
  // belong to the same loop); without one, sizes are ignored.
  StubExecutor(engine::EventLoop& loop, StubExecutorOptions options = {},
               ArtifactStore* store = nullptr);
  // Pending tasks are dropped without calling `done`.
  ~StubExecutor() override;
  StubExecutor(const StubExecutor&) = delete;
  StubExecutor& operator=(const StubExecutor&) = delete;

  void Launch(engine::TaskLaunch launch, engine::TaskDone done) override;
  // Fires `done` (posted) at once, failed with "canceled".
  void Cancel(const std::string& task_id) override;

  size_t running() const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with timer callbacks, which may outlive us
};

}  // namespace kfpbench::exec
