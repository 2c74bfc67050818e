// PIPELINE_UPLOAD: uploads the scenario's pipeline file as a new pipeline and
// then a second version of it, by `numTimes` (or `concurrency`) workers back
// to back or `rate` times a minute (open loop), for `runTime`. Measures the
// write path of the pipeline store (UploadPipeline, UploadPipelineVersion).
#include "harness/modes.h"

#include <fmt/format.h>

#include "harness/load_loops.h"
#include "util/ids.h"

namespace kfpbench::harness {
namespace {

class PipelineUploadRunner : public ModeRunner {
 public:
  Status Run(const Scenario& scenario, Context& context) override;
};

}  // namespace

Status PipelineUploadRunner::Run(const Scenario& scenario, Context& context) {
  auto content = context.ReadPipelineFile(scenario.pipeline_path);
  if (!content.ok()) return content.error();
  const std::string file_name = scenario.pipeline_path.filename().string();
  const std::string prefix =
      context.Name(fmt::format("upload-{}-{}", scenario.index, NewUuid().substr(0, 8)));
  const WallTime end = WallClock::now() + scenario.run_time;
  // One upload pair, neither started after the end; the latencies are
  // recorded by the client's observer.
  kfp::Client load = context.client().StartingBefore(end);
  auto upload = [&](const std::string& name) {
    auto p = load.UploadPipeline(name, file_name, *content);
    if (!p.ok()) return false;
    context.TrackPipeline({p->pipeline_id, name});
    return load.UploadPipelineVersion(p->pipeline_id, name + "-v2", file_name, *content).ok();
  };
  if (scenario.rate_per_minute) {
    DriveOpenLoop(context, scenario, 8, end,
                  [&](int n, WallTime) { upload(fmt::format("{}-{}", prefix, n)); });
  } else {
    DriveClosedLoop(context, scenario.InFlight(), end, [&](int worker, int n) {
      return upload(fmt::format("{}-w{}-{}", prefix, worker, n));
    });
  }
  return Ok();
}

const ModeSpec& PipelineUploadMode() {
  static const ModeSpec mode{
      .name = "PIPELINE_UPLOAD",
      .needs_pipeline = true,
      .make_runner = [] { return std::unique_ptr<ModeRunner>(new PipelineUploadRunner()); },
  };
  return mode;
}

}  // namespace kfpbench::harness
