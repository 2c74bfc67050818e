// RANDOM_GETS: the read path of KFP's UI and SDK, as perf-tests exercise it —
// list pipelines, list a pipeline's versions, list experiments, list runs,
// get a run — repeated by `concurrency` (else `numTimes`) workers as fast as
// the server answers, or started `rate` times a minute (open loop), for
// `runTime`. With a `mix` ({"GetRun": 8, "ListRuns": 1}), each arrival or
// turn is instead one call drawn by weight, on ids read once at the start.
#pragma once

#include "harness/runner.h"

namespace kfpbench::harness {

class RandomGetsRunner : public ModeRunner {
 public:
  Status Run(const Scenario& scenario, Context& context) override;
};

}  // namespace kfpbench::harness
