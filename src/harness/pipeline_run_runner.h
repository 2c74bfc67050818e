// PIPELINE_RUN and EXPERIMENT. Closed loop (default): keep `numTimes` (or
// `concurrency`) runs in flight for `runTime`, each created, then polled to a
// terminal state. Open loop (`rate`): start runs at their intended times,
// constant or Poisson, whatever the server's state, and follow them all.
// EXPERIMENT first creates an experiment of its own.
#pragma once

#include "harness/runner.h"

namespace kfpbench::harness {

class PipelineRunRunner : public ModeRunner {
 public:
  explicit PipelineRunRunner(bool own_experiment) : own_experiment_(own_experiment) {}
  Status Run(const Scenario& scenario, Context& context) override;

 private:
  Status RunClosedLoop(const Scenario& scenario, Context& context, const kfp::RunCreate& base);
  // Open loop at the scenario's rate until `end`, then waits for the runs.
  Status RunOpenLoop(const Scenario& scenario, Context& context, const kfp::RunCreate& base,
                     WallTime end);
  Status RunStress(const Scenario& scenario, Context& context, const kfp::RunCreate& base);

  bool own_experiment_;
};

// Polls a run until it is terminal or `give_up` passes (sooner after an
// interruption: the context's grace). Fills `record` from the last answer.
void FollowRun(Context& context, RunRecord& record, WallTime give_up);

}  // namespace kfpbench::harness
