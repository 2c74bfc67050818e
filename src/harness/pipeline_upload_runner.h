// PIPELINE_UPLOAD: uploads the scenario's pipeline file as a new pipeline and
// then a second version of it, by `numTimes` (or `concurrency`) workers back
// to back or `rate` times a minute (open loop), for `runTime`. Measures the
// write path of the pipeline store (UploadPipeline, UploadPipelineVersion).
#pragma once

#include "harness/runner.h"

namespace kfpbench::harness {

class PipelineUploadRunner : public ModeRunner {
 public:
  Status Run(const Scenario& scenario, Context& context) override;
};

}  // namespace kfpbench::harness
